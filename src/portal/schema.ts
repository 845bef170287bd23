import { Type } from 'typebox';

export const CreatePortalSessionBodySchema = Type.Object(
  {
    ttlSeconds: Type.Optional(
      Type.Integer({ minimum: 300, maximum: 86_400, description: 'the session’s lifetime, default 3600' }),
    ),
    language: Type.Optional(
      Type.String({ maxLength: 64, description: 'one of the project’s languages; its first by default' }),
    ),
  },
  { additionalProperties: false, examples: [{ ttlSeconds: 3600, language: 'fr' }] },
);

export const PortalSessionCreatedSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    url: Type.String({ description: 'the one-time link: it works once, within 10 minutes' }),
    expiresAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'PortalSessionCreated' },
);

const PortalSessionSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.String({ format: 'date-time' }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  language: Type.String(),
});

export const PortalSessionPageSchema = Type.Object(
  { data: Type.Array(PortalSessionSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) },
  { $id: 'PortalSessionPage' },
);

export const ExchangeBodySchema = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);
