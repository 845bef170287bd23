import { Type } from 'typebox';
import { MAX_RECOVERY } from '../delivery-store/recover.ts';
import { EventTypesSchema } from '../webhooks/schema.ts';

export const RetriedSchema = Type.Object(
  { deliveryId: Type.String({ format: 'uuid' }) },
  { $id: 'DeliveryRetried' },
);

export const RecoverBodySchema = Type.Object(
  {
    states: Type.Array(
      Type.Union([Type.Literal('dead'), Type.Literal('delivered'), Type.Literal('cancelled')]),
      {
        minItems: 1,
        maxItems: 3,
        uniqueItems: true,
        description: 'the state of each event’s latest delivery',
      },
    ),
    eventTypes: Type.Optional(EventTypesSchema),
    since: Type.String({ format: 'date-time', description: 'from this time of the events (inclusive)' }),
    until: Type.Optional(
      Type.String({ format: 'date-time', description: 'to this time (exclusive); now by default' }),
    ),
    dryRun: Type.Optional(Type.Boolean({ description: 'count only: nothing is created' })),
  },
  {
    additionalProperties: false,
    examples: [{ states: ['dead'], since: '2026-11-23T00:00:00Z', eventTypes: ['pay.*'], dryRun: true }],
  },
);

export const RecoverySchema = Type.Object(
  {
    jobId: Type.Optional(Type.String({ format: 'uuid', description: 'absent on a dry run' })),
    matched: Type.Integer({ minimum: 0, maximum: MAX_RECOVERY }),
  },
  { $id: 'Recovery' },
);

export const JobSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    kind: Type.Literal('recover'),
    state: Type.Union(['queued', 'running', 'done', 'failed'].map((s) => Type.Literal(s))),
    total: Type.Integer({ minimum: 0 }),
    done: Type.Integer({ minimum: 0 }),
    createdAt: Type.String({ format: 'date-time' }),
    finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'Job' },
);
