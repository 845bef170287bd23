import { Type } from 'typebox';

const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' });

export const UsageQuerySchema = Type.Object(
  {
    from: Type.Optional(Type.String({ description: 'YYYY-MM-DD (UTC), inclusive' })),
    to: Type.Optional(Type.String({ description: 'YYYY-MM-DD (UTC), inclusive' })),
  },
  { additionalProperties: false },
);

export const UsageSchema = Type.Object(
  {
    from: Day,
    to: Day,
    data: Type.Array(
      Type.Object({ day: Day, capability: Type.String(), metric: Type.String(), count: Type.Integer() }),
    ),
    limits: Type.Array(
      Type.Object({ capability: Type.String(), metric: Type.String(), dailyLimit: Type.Integer() }),
    ),
  },
  {
    $id: 'Usage',
    examples: [
      {
        from: '2026-11-23',
        to: '2026-11-24',
        data: [
          { day: '2026-11-23', capability: 'core', metric: 'events_published', count: 1840 },
          { day: '2026-11-24', capability: 'core', metric: 'events_published', count: 312 },
        ],
        limits: [{ capability: 'core', metric: 'events_published', dailyLimit: 100_000 }],
      },
    ],
  },
);

const Name = Type.String({ pattern: '^[a-z][a-z0-9_]*$', maxLength: 64 });

export const EffectiveLimitSchema = Type.Object(
  {
    capability: Type.String(),
    metric: Type.String(),
    dailyLimit: Type.Integer(),
    source: Type.Union([Type.Literal('default'), Type.Literal('project')]),
  },
  { $id: 'EffectiveLimit' },
);

export const EffectiveLimitsSchema = Type.Object(
  { data: Type.Array(Type.Unsafe<unknown>({ $ref: 'EffectiveLimit#' })) },
  { $id: 'EffectiveLimits' },
);

export const LimitParamsSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  capability: Name,
  metric: Name,
});

export const LimitBodySchema = Type.Object(
  { dailyLimit: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }) },
  { additionalProperties: false, examples: [{ dailyLimit: 50_000 }] },
);

export const UsageChangesQuerySchema = Type.Object(
  {
    cursor: Type.Optional(
      Type.String({ maxLength: 1024, description: 'the nextCursor of the last page read' }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000, description: 'changes per page, default 100' }),
    ),
  },
  { additionalProperties: false },
);

export const UsageChangePageSchema = Type.Object(
  {
    data: Type.Array(
      Type.Object({
        projectId: Type.String({ format: 'uuid' }),
        day: Day,
        capability: Type.String(),
        metric: Type.String(),
        count: Type.Integer({ description: 'the day’s total as it stands' }),
      }),
    ),
    nextCursor: Type.String({
      description: 'where to read from next; on an empty page, the cursor asked with',
    }),
  },
  { $id: 'UsageChangePage' },
);

export const ProjectUsageQuerySchema = Type.Object(
  { projectId: Type.String({ format: 'uuid' }), ...UsageQuerySchema.properties },
  { additionalProperties: false },
);
