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
  {
    $id: 'CreatedApiKey',
    examples: [
      {
        id: '0193a8f3-0c2d-7b4e-9f5a-1b2c3d4e5f60',
        projectId: '0193a8f2-5b1c-7e3d-8a4f-6c2b9d0e1f3a',
        prefix: 'pk_live_Q2xv',
        name: 'notify-api',
        scopes: ['events:write', 'webhooks:read'],
        createdAt: '2026-11-24T09:30:00.000Z',
        expiresAt: null,
        lastUsedAt: null,
        revokedAt: null,
        key: 'pk_live_Q2xvZ8mJrT4wYbN1sKcE7aUd',
      },
    ],
  },
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
  {
    additionalProperties: false,
    examples: [{ scopes: ['events:write', 'webhooks:read'], name: 'notify-api', expiresAt: null }],
  },
);
