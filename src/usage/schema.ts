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
  { $id: 'Usage' },
);
