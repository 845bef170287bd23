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

/** A header's name as HTTP allows it (a token), written in lower case. */
export const HEADER_NAME = "^[a-z0-9!#$%&'*+.^_`|~-]{1,100}$";

const METADATA_KEY = Type.String({ pattern: '^[a-zA-Z0-9_.-]{1,40}$' });
const METADATA_VALUE = Type.String({ maxLength: 500 });
const HEADER_KEY = Type.String({ pattern: HEADER_NAME });
// visible ASCII, with spaces inside only
const HEADER_VALUE = Type.String({
  maxLength: 1024,
  pattern: '^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$',
});
const HEADERS_ALLOWED = 'Not allowed: hop-by-hop headers, host, content-length, content-type, webhook-*';

/** What a receiver is called and carries: the fields every endpoint may set on create. */
const FilterSchema = Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
  description:
    'an Amazon EventBridge event pattern over {type, data} (exact values, arrays as any-of, prefix, suffix, anything-but, numeric, exists, equals-ignore-case, $or), at most 4 KiB and 8 levels: an event it does not match makes no delivery here; null for none',
});

const AuthSchema = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('oauth2_client_credentials'),
        tokenUrl: Type.String({
          format: 'uri',
          maxLength: MAX_URL_LENGTH,
          description: 'a public HTTPS address',
        }),
        clientId: Type.String({ minLength: 1, maxLength: 256 }),
        clientSecret: Type.String({ minLength: 1, maxLength: 1024, description: 'write-only' }),
        scope: Type.Optional(Type.String({ maxLength: 1024 })),
        audience: Type.Optional(Type.String({ maxLength: 1024 })),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  {
    description:
      'OAuth 2.0 client credentials: the worker fetches a token from tokenUrl, keeps it until 60 s before it expires, and sends it as a bearer; a 401 fetches a new one once. null for none',
  },
);
const PEM = Type.String({ minLength: 1, maxLength: 16384 });
const TlsSchema = Type.Union(
  [Type.Object({ certificate: PEM, privateKey: PEM }, { additionalProperties: false }), Type.Null()],
  {
    description:
      'a client certificate and its private key (PEM, unencrypted; the key write-only), presented for mutual TLS; null for none',
  },
);

export const receiverFields = {
  auth: Type.Optional(AuthSchema),
  tls: Type.Optional(TlsSchema),
  filter: Type.Optional(FilterSchema),
  name: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()], {
      description: 'what the project calls it, shown in the portal; null by default',
    }),
  ),
  description: Type.Optional(
    Type.Union([Type.String({ maxLength: 1000 }), Type.Null()], { description: 'null by default' }),
  ),
  metadata: Type.Optional(
    Type.Record(METADATA_KEY, METADATA_VALUE, {
      maxProperties: 20,
      additionalProperties: false,
      description: 'the project’s own labels, at most 20, kept and shown as given',
    }),
  ),
  headers: Type.Optional(
    Type.Record(HEADER_KEY, HEADER_VALUE, {
      maxProperties: 20,
      additionalProperties: false,
      description: `at most 20 headers sent with every delivery, names in lower case; their values are write-only and answered as ***. ${HEADERS_ALLOWED}`,
    }),
  ),
};

/** The same fields in a PATCH: metadata and headers merge (a name set to null is removed). */
export const receiverChanges = {
  auth: receiverFields.auth,
  tls: receiverFields.tls,
  name: receiverFields.name,
  description: receiverFields.description,
  filter: receiverFields.filter,
  metadata: Type.Optional(
    Type.Record(METADATA_KEY, Type.Union([METADATA_VALUE, Type.Null()]), {
      maxProperties: 40,
      additionalProperties: false,
      description: 'merged into the metadata: a key set to null is removed; at most 20 remain',
    }),
  ),
  headers: Type.Optional(
    Type.Record(HEADER_KEY, Type.Union([HEADER_VALUE, Type.Null()]), {
      maxProperties: 40,
      additionalProperties: false,
      description: `merged into the headers: a value replaces, null removes; at most 20 remain. ${HEADERS_ALLOWED}`,
    }),
  ),
};

export const CreateEndpointBodySchema = Type.Object(
  {
    url: Type.String({ format: 'uri', maxLength: MAX_URL_LENGTH, description: 'a public HTTPS address' }),
    eventTypes: EventTypesSchema,
    ...receiverFields,
  },
  {
    additionalProperties: false,
    examples: [{ url: 'https://hooks.example.com/platform', eventTypes: ['pay.*', 'core.*'] }],
  },
);

export const RateSchema = Type.Union([Type.Integer({ minimum: 1, maximum: 10_000 }), Type.Null()], {
  description: 'the most deliveries sent to it per second, across every worker; null for no limit',
});
export const OrderingSchema = Type.Union(
  [Type.Literal('none'), Type.Literal('endpoint'), Type.Literal('key')],
  {
    description:
      'endpoint: one delivery in flight at a time, in publish order; key: the same per orderingKey of the events',
  },
);

export const endpointFields = {
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
  name: Type.Union([Type.String(), Type.Null()]),
  description: Type.Union([Type.String(), Type.Null()]),
  metadata: Type.Record(Type.String(), Type.String()),
  headers: Type.Record(Type.String(), Type.Literal('***'), {
    description: 'the names of the headers sent with every delivery; their values are never shown',
  }),
  filter: FilterSchema,
  auth: Type.Union([
    Type.Object({
      type: Type.Literal('oauth2_client_credentials'),
      tokenUrl: Type.String(),
      clientId: Type.String(),
      clientSecret: Type.Literal('***'),
      scope: Type.Optional(Type.String()),
      audience: Type.Optional(Type.String()),
    }),
    Type.Null(),
  ]),
  tls: Type.Union([
    Type.Object({
      certificate: Type.String(),
      privateKey: Type.Literal('***'),
      expiresAt: Type.String({ format: 'date-time' }),
    }),
    Type.Null(),
  ]),
  createdAt: Type.String({ format: 'date-time' }),
};

export const endpointExample = {
  id: '0193b0a4-1e0a-7c1e-9d6e-2f4b8a1c3d5e',
  url: 'https://hooks.example.com/platform',
  eventTypes: ['pay.*', 'core.*'],
  active: true,
  paused: false,
  rateLimitPerSecond: null,
  ordering: 'none',
  waiting: 0,
  hasPreviousSecret: false,
  name: 'Payments ledger',
  description: null,
  metadata: { team: 'finance' },
  headers: { 'x-tenant': '***' },
  filter: { data: { amount: [{ numeric: ['>=', 10000] }] } },
  auth: null,
  tls: null,
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
    ...receiverChanges,
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
