import { Type } from 'typebox';

const Json = Type.Object({}, { additionalProperties: true });
const OrNull = <T extends typeof Json>(schema: T) => Type.Union([schema, Type.Null()]);

/** Any name: a malformed one is refused by PUT (400) and found by nothing else (404). */
export const EventTypeParamsSchema = Type.Object({ name: Type.String({ minLength: 1, maxLength: 256 }) });

export const PutEventTypeBodySchema = Type.Object(
  {
    description: Type.String({ minLength: 1, maxLength: 1000 }),
    schema: Type.Optional(
      OrNull(
        Type.Object({}, { additionalProperties: true, description: 'a JSON Schema (2020-12) of the data' }),
      ),
    ),
    example: Type.Optional(
      OrNull(
        Type.Object(
          {},
          { additionalProperties: true, description: 'example data, checked against the schema' },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);

export const EventTypeRecordSchema = Type.Object(
  {
    name: Type.String(),
    description: Type.String(),
    schema: OrNull(Json),
    example: OrNull(Json),
    source: Type.Union([Type.Literal('project'), Type.Literal('platform')]),
    subscribers: Type.Integer({ minimum: 0, description: 'active endpoints that take this type' }),
    createdAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'null for the platform’s types',
    }),
  },
  { $id: 'EventType' },
);

export const EventTypeListSchema = Type.Object(
  { data: Type.Array(Type.Unsafe<unknown>({ $ref: 'EventType#' })) },
  { $id: 'EventTypeList' },
);
