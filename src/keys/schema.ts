import { Type } from 'typebox';

const apiKeyFields = {
  id: Type.String({ format: 'uuid' }),
  projectId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description: "null: an operator's key",
  }),
  prefix: Type.String({ description: 'the first 12 characters of the key, to tell keys apart' }),
  name: Type.Union([Type.String(), Type.Null()]),
  scopes: Type.Array(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'to the minute',
  }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
};

export const ApiKeySchema = Type.Object(apiKeyFields, { $id: 'ApiKey' });

export const CreatedApiKeySchema = Type.Object(
  { ...apiKeyFields, key: Type.String({ description: 'the key itself, shown this one time only' }) },
  { $id: 'CreatedApiKey' },
);

export const ApiKeyPageSchema = Type.Object(
  {
    data: Type.Array(Type.Unsafe<unknown>({ $ref: 'ApiKey#' })),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'ApiKeyPage' },
);

export const CreateKeyBodySchema = Type.Object(
  {
    scopes: Type.Array(Type.String(), {
      minItems: 1,
      maxItems: 20,
      description: 'project scopes, or ["all"]',
    }),
    name: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()])),
    expiresAt: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
  },
  { additionalProperties: false },
);
