import { Type } from 'typebox';

/** A dotted lowercase event type, such as pay.payment.succeeded (docs/api.md, Events). */
export const EVENT_TYPE = '[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)+';

/** A dotted lowercase event type, such as pay.payment.succeeded. */
export const EventTypeSchema = Type.String({
  maxLength: 128,
  pattern: `^${EVENT_TYPE}$`,
});

const Json = Type.Object({}, { additionalProperties: true });
const OrNull = <T extends typeof Json>(schema: T) => Type.Union([schema, Type.Null()]);

/** A name to declare: a malformed one is refused by PUT with a 400 that says why (catalogue/service.ts). */
export const NewEventTypeParamsSchema = Type.Object({ name: Type.String({ minLength: 1, maxLength: 256 }) });

/** A name to find: a malformed one names nothing (404, as a path id of the wrong form: http/fault.ts). */
export const EventTypeParamsSchema = Type.Object({ name: EventTypeSchema });

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
  {
    additionalProperties: false,
    examples: [
      {
        description: 'A payment was captured.',
        schema: {
          type: 'object',
          properties: { paymentId: { type: 'string' }, amount: { type: 'integer' } },
          required: ['paymentId', 'amount'],
        },
        example: { paymentId: 'pay_8Jd2', amount: 4200 },
      },
    ],
  },
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
