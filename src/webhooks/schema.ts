import { Type } from 'typebox';
import { EVENT_TYPE } from '../catalogue/schema.ts';
import { MAX_URL_LENGTH } from './address-policy.ts';

/** A type, `*`, or a prefix pattern such as `pay.*` or `core.*` (docs/api.md, Steering delivery). */
const EVENT_TYPE_PATTERN = `^(\\*|${EVENT_TYPE}|[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*\\.\\*)$`;

export const EventTypesSchema = Type.Array(
  Type.String({
    maxLength: 128,
    pattern: EVENT_TYPE_PATTERN,
    description:
      'a dotted lowercase type, a prefix pattern such as pay.* (core.* for the platform’s events), or * for every type but core.*',
  }),
  { minItems: 1, maxItems: 50, uniqueItems: true },
);

export const CreateEndpointBodySchema = Type.Object(
  {
    url: Type.String({ format: 'uri', maxLength: MAX_URL_LENGTH, description: 'a public HTTPS address' }),
    eventTypes: EventTypesSchema,
  },
  {
    additionalProperties: false,
    examples: [{ url: 'https://hooks.example.com/platform', eventTypes: ['pay.*', 'core.*'] }],
  },
);

const RateSchema = Type.Union([Type.Integer({ minimum: 1, maximum: 10_000 }), Type.Null()], {
  description: 'the most deliveries sent to it per second, across every worker; null for no limit',
});
const OrderingSchema = Type.Union([Type.Literal('none'), Type.Literal('endpoint'), Type.Literal('key')], {
  description:
    'endpoint: one delivery in flight at a time, in publish order; key: the same per orderingKey of the events',
});

const endpointFields = {
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  eventTypes: Type.Array(Type.String()),
  active: Type.Boolean({
    description: 'false once disabled (by a 410, a run of dead deliveries, or its owner)',
  }),
  paused: Type.Boolean({ description: 'its deliveries are created and held, nothing is sent' }),
  rateLimitPerSecond: RateSchema,
  ordering: OrderingSchema,
  waiting: Type.Integer({ minimum: 0, description: 'its pending deliveries' }),
  hasPreviousSecret: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
};

const endpointExample = {
  id: '0193b0a4-1e0a-7c1e-9d6e-2f4b8a1c3d5e',
  url: 'https://hooks.example.com/platform',
  eventTypes: ['pay.*', 'core.*'],
  active: true,
  paused: false,
  rateLimitPerSecond: null,
  ordering: 'none',
  waiting: 0,
  hasPreviousSecret: false,
  createdAt: '2026-11-24T09:30:00.000Z',
};

export const WebhookEndpointSchema = Type.Object(endpointFields, {
  $id: 'WebhookEndpoint',
  examples: [endpointExample],
});
export const WebhookEndpointCreatedSchema = Type.Object(
  {
    ...endpointFields,
    secret: Type.String({ description: 'whsec_…, shown this one time only' }),
    unknownEventTypes: Type.Array(Type.String(), {
      description: 'the exact eventTypes entries the catalogue does not know (allowed; maybe a typo)',
    }),
  },
  {
    $id: 'WebhookEndpointCreated',
    examples: [
      { ...endpointExample, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', unknownEventTypes: [] },
    ],
  },
);

export const EndpointPatchSchema = Type.Object(
  {
    url: Type.Optional(Type.String({ format: 'uri', maxLength: MAX_URL_LENGTH })),
    eventTypes: Type.Optional(EventTypesSchema),
    rateLimitPerSecond: Type.Optional(RateSchema),
    ordering: Type.Optional(OrderingSchema),
    active: Type.Optional(
      Type.Boolean({ description: 'true re-enables a disabled endpoint, keeping its secrets' }),
    ),
  },
  { additionalProperties: false, examples: [{ rateLimitPerSecond: 50, ordering: 'endpoint' }] },
);

export const CancelledSchema = Type.Object(
  { cancelled: Type.Integer({ minimum: 0 }) },
  { $id: 'DeliveriesCancelled' },
);
export const WebhookEndpointListSchema = Type.Object(
  {
    data: Type.Array(
      Type.Object({
        ...endpointFields,
        last24h: Type.Object(
          { attempts: Type.Integer({ minimum: 0 }), succeeded: Type.Integer({ minimum: 0 }) },
          {
            description:
              'its delivery attempts in the last 24 hours (of events of that time), and how many succeeded',
          },
        ),
      }),
    ),
  },
  { $id: 'WebhookEndpointList' },
);
export const WebhookSecretRotatedSchema = Type.Object(
  { id: Type.String({ format: 'uuid' }), secret: Type.String() },
  { $id: 'WebhookSecretRotated' },
);

export const EndpointStatsSchema = Type.Object(
  {
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time' }),
    hours: Type.Array(
      Type.Object({
        hour: Type.String({ format: 'date-time', description: 'the hour’s start' }),
        succeeded: Type.Integer({ minimum: 0 }),
        failed: Type.Integer({ minimum: 0 }),
      }),
      { description: 'the last 24 hours, oldest first, the current hour last' },
    ),
  },
  { $id: 'EndpointStats' },
);
