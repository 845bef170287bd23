import { Type } from 'typebox';

export const HealthSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
    env: Type.Union([Type.Literal('local'), Type.Literal('dev'), Type.Literal('prod')]),
    version: Type.String(),
    commit: Type.String(),
    db: Type.Union([Type.Literal('up'), Type.Literal('down')]),
    queue: Type.Union([Type.Literal('up'), Type.Literal('idle')]),
    queueDead: Type.Integer(),
    queueFailed24h: Type.Integer(),
    webhooksDead24h: Type.Integer(),
    breakers: Type.Array(
      Type.Object({
        provider: Type.String(),
        state: Type.Union([
          Type.Literal('closed'),
          Type.Literal('open'),
          Type.Literal('half_open'),
          Type.Literal('unknown'),
        ]),
      }),
    ),
    reasons: Type.Array(
      Type.Object({
        code: Type.Union([
          Type.Literal('database_down'),
          Type.Literal('migrations_pending'),
          Type.Literal('no_worker'),
          Type.Literal('breaker_open'),
          Type.Literal('breaker_unknown'),
        ]),
        message: Type.String(),
      }),
      {
        description:
          'an addition to the spec’s record: why the status is degraded, one entry per cause (empty when ok)',
      },
    ),
    lastMigration: Type.Union([Type.String(), Type.Null()]),
    history: Type.Object(
      {
        retentionDays: Type.Integer({
          description: "the installation's retention (a project may keep more or less)",
        }),
        horizon: Type.Union([Type.String({ format: 'date' }), Type.Null()], {
          description: 'the first UTC day kept: older days are dropped',
        }),
        oldestPartition: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
      },
      { description: 'an addition to the spec’s record: how far back the history goes' },
    ),
    endpoints: Type.Optional(
      Type.Array(
        Type.Object({
          id: Type.String({ format: 'uuid' }),
          state: Type.Union([Type.Literal('active'), Type.Literal('paused'), Type.Literal('disabled')]),
          waiting: Type.Integer({ minimum: 0, description: 'its pending deliveries' }),
        }),
        {
          description:
            'an addition to the spec’s record: the webhook endpoints of the key’s project (absent for an operator’s key or while the database is down)',
        },
      ),
    ),
  },
  { $id: 'Health' },
);

export const ProbeSchema = Type.Object({ status: Type.String() });
