import { Type } from 'typebox';

const Amount = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const Metric = Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$', description: 'bare: messages_sent' });

export const UsageBatchSchema = Type.Object(
  {
    records: Type.Array(
      Type.Object(
        {
          id: Type.String({
            pattern: '^[\\x21-\\x7e]{1,255}$',
            description: 'unique per capability for 35 days',
          }),
          projectId: Type.String({ format: 'uuid' }),
          metric: Metric,
          value: Amount,
          time: Type.Optional(Type.String({ format: 'date-time', description: 'default: now' })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        records: [
          {
            id: 'msg_8f2k1',
            projectId: '18767f97-0c9c-4522-b8cd-09b38524cd80',
            metric: 'messages_sent',
            value: 1,
            time: '2026-11-26T10:00:00Z',
          },
        ],
      },
    ],
  },
);

export const UsageAcceptedSchema = Type.Object(
  {
    accepted: Type.Integer({ minimum: 0, description: 'records counted now' }),
    duplicates: Type.Integer({ minimum: 0, description: 'records whose id was counted before' }),
  },
  { $id: 'UsageAccepted' },
);

export const ReservationBodySchema = Type.Object(
  {
    projectId: Type.String({ format: 'uuid' }),
    metric: Metric,
    amount: Amount,
    ttlSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 900, description: 'default 60' })),
  },
  {
    additionalProperties: false,
    examples: [
      { projectId: '18767f97-0c9c-4522-b8cd-09b38524cd80', metric: 'tokens', amount: 4000, ttlSeconds: 120 },
    ],
  },
);

export const ReservationSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    projectId: Type.String({ format: 'uuid' }),
    metric: Type.String(),
    amount: Type.Integer(),
    expiresAt: Type.String({ format: 'date-time' }),
    remaining: Type.Union([Type.Integer(), Type.Null()], {
      description: 'left of the day after it; null: no limit',
    }),
  },
  { $id: 'Reservation' },
);

export const CommitBodySchema = Type.Object(
  { amount: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'what was used' }) },
  { additionalProperties: false, examples: [{ amount: 2713 }] },
);

export const CommittedSchema = Type.Object(
  {
    usageRecordId: Type.String({ description: 'the reservation’s id: the usage record it made' }),
    expired: Type.Boolean({ description: 'committed after it expired: the usage is recorded all the same' }),
    committed: Type.Union([Type.Integer(), Type.Null()]),
  },
  { $id: 'ReservationCommitted' },
);

export const ReleasedSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    state: Type.Union([Type.Literal('released'), Type.Literal('expired')]),
  },
  { $id: 'ReservationReleased' },
);

export const LimitParamsSchema = Type.Object({ projectId: Type.String({ format: 'uuid' }), metric: Metric });

export const LimitTodaySchema = Type.Object(
  {
    dailyLimit: Type.Union([Type.Integer(), Type.Null()]),
    used: Type.Integer(),
    reserved: Type.Integer({ description: 'held by open reservations' }),
    remaining: Type.Union([Type.Integer(), Type.Null()]),
    resetsAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'LimitToday' },
);
