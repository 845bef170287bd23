import { Type } from 'typebox';
import { EventTypeSchema } from '../../catalogue/schema.ts';
import { GATEWAY_METHODS } from './manifest.ts';

export const CAPABILITY_NAME = '^[a-z][a-z0-9_]{1,31}$';

const Url = Type.Union(
  [Type.String({ format: 'uri', maxLength: 2048, pattern: '^https?://' }), Type.Null()],
  {
    description: 'an http(s) URL, or null',
  },
);
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });
const Json = Type.Object({}, { additionalProperties: true });
const Name = (pattern: string, description: string) => Type.String({ pattern, maxLength: 128, description });

export const CapabilityParamsSchema = Type.Object({ name: Type.String({ pattern: CAPABILITY_NAME }) });

export const ManifestSchema = Type.Object(
  {
    description: Text(1000),
    scopes: Type.Array(
      Type.Object(
        { name: Name('^[a-z][a-z0-9_]*:[a-z][a-z0-9_.-]*$', 'capability:action'), description: Text(500) },
        { additionalProperties: false },
      ),
      { maxItems: 100 },
    ),
    metrics: Type.Array(
      Type.Object(
        {
          name: Name('^[a-z][a-z0-9_]{0,63}$', 'bare: messages_sent'),
          description: Text(500),
          unit: Type.Optional(Text(32)),
          defaultDailyLimit: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
        },
        { additionalProperties: false },
      ),
      { maxItems: 100 },
    ),
    eventTypes: Type.Array(
      Type.Object(
        {
          name: EventTypeSchema,
          description: Text(1000),
          schema: Type.Optional(Type.Union([Json, Type.Null()])),
          example: Type.Optional(Type.Union([Json, Type.Null()])),
        },
        { additionalProperties: false },
      ),
      { maxItems: 200 },
    ),
    providers: Type.Array(
      Type.Object(
        {
          name: Name('^[a-z][a-z0-9_-]{0,63}$', 'a provider: twilio'),
          description: Type.Optional(Text(500)),
        },
        { additionalProperties: false },
      ),
      { maxItems: 50 },
    ),
    erasure: Type.Union([
      Type.Object(
        {
          mode: Type.Literal('push'),
          timeoutSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 60 })),
        },
        { additionalProperties: false },
      ),
      Type.Object({ mode: Type.Literal('pull') }, { additionalProperties: false }),
      Type.Null(),
    ]),
    gateway: Type.Union([
      Type.Object(
        {
          routes: Type.Array(
            Type.Object(
              {
                method: Type.Union(GATEWAY_METHODS.map((m) => Type.Literal(m))),
                path: Type.String({ minLength: 4, maxLength: 512 }),
                scope: Type.String({ maxLength: 128 }),
                idempotent: Type.Boolean(),
                metric: Type.Optional(Type.String({ maxLength: 64 })),
              },
              { additionalProperties: false },
            ),
            { minItems: 1, maxItems: 200 },
          ),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
  },
  {
    $id: 'Manifest',
    additionalProperties: false,
    examples: [
      {
        description: 'Messages to people, by e-mail and SMS.',
        scopes: [{ name: 'notify:send', description: 'Send messages' }],
        metrics: [
          { name: 'messages_sent', description: 'Messages handed to a provider', defaultDailyLimit: 10000 },
        ],
        eventTypes: [
          {
            name: 'notify.message.sent',
            description: 'A message was handed to its provider.',
            schema: {
              type: 'object',
              properties: { messageId: { type: 'string' } },
              required: ['messageId'],
            },
            example: { messageId: 'msg_1' },
          },
        ],
        providers: [{ name: 'mailer', description: 'The e-mail provider' }],
        erasure: { mode: 'push', timeoutSeconds: 5 },
        gateway: {
          routes: [
            {
              method: 'POST',
              path: '/v1/messages',
              scope: 'notify:send',
              idempotent: true,
              metric: 'messages_sent',
            },
          ],
        },
      },
    ],
  },
);

/** What an operator may grant a capability beyond its own routes. */
const GrantSchema = Type.Union([Type.Literal('projects:read'), Type.Literal('usage:read')], {
  description:
    'projects:read: the installation’s projects; usage:read: every project’s usage and its changes',
});

export const CapabilitySchema = Type.Object(
  {
    name: Type.String(),
    description: Type.String(),
    upstream: Type.Union([Type.String(), Type.Null()]),
    erasureUrl: Type.Union([Type.String(), Type.Null()]),
    manifest: Type.Union([Type.Unsafe<unknown>({ $ref: 'Manifest#' }), Type.Null()]),
    grants: Type.Array(GrantSchema, { description: 'set by an operator only, never by the capability' }),
    hasPreviousSigningSecret: Type.Boolean(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Capability' },
);

export const CapabilityCreatedSchema = Type.Object(
  {
    ...CapabilitySchema.properties,
    key: Type.String({ description: 'the capability’s first key (pk_cap_…), shown this once' }),
    keyId: Type.String({ format: 'uuid' }),
    signingSecret: Type.String({ description: 'whsec_…, shown this once' }),
  },
  { $id: 'CapabilityCreated' },
);

export const CapabilityListSchema = Type.Object(
  { data: Type.Array(Type.Unsafe<unknown>({ $ref: 'Capability#' })) },
  { $id: 'CapabilityList' },
);

export const CreateCapabilityBodySchema = Type.Object(
  {
    name: Type.String({
      pattern: CAPABILITY_NAME,
      description: 'lowercase, 2-32 characters; core is reserved',
    }),
    description: Text(1000),
    upstream: Type.Optional(Url),
    erasureUrl: Type.Optional(Url),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'notify',
        description: 'Notifications',
        upstream: 'http://notify.internal:4000',
        erasureUrl: null,
      },
    ],
  },
);

export const CapabilityPatchSchema = Type.Object(
  {
    description: Type.Optional(Text(1000)),
    upstream: Type.Optional(Url),
    erasureUrl: Type.Optional(Url),
    grants: Type.Optional(Type.Array(GrantSchema, { uniqueItems: true, maxItems: 2 })),
  },
  {
    additionalProperties: false,
    examples: [{ upstream: 'http://notify.internal:4001' }, { grants: ['usage:read'] }],
  },
);

export const CapabilityKeyCreatedSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    capability: Type.String(),
    prefix: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    key: Type.String({ description: 'shown this once' }),
  },
  { $id: 'CapabilityKeyCreated' },
);

export const SigningSecretRotatedSchema = Type.Object(
  { name: Type.String(), signingSecret: Type.String({ description: 'whsec_…, shown this once' }) },
  { $id: 'SigningSecretRotated' },
);

const BreakerStateSchema = Type.Union([
  Type.Literal('closed'),
  Type.Literal('open'),
  Type.Literal('half_open'),
]);

export const BreakerReportBodySchema = Type.Object(
  {
    instance: Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'the reporting instance: a host or pod name',
    }),
    providers: Type.Array(
      Type.Object(
        { provider: Type.String({ maxLength: 64 }), state: BreakerStateSchema },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 50 },
    ),
  },
  {
    additionalProperties: false,
    examples: [{ instance: 'notify-7d9f-2', providers: [{ provider: 'mailer', state: 'closed' }] }],
  },
);

/** A capability as its operator sees it: with its instances' live breaker reports. */
export const CapabilityWithReportsSchema = Type.Object(
  {
    ...CapabilitySchema.properties,
    breakerReports: Type.Array(
      Type.Object({
        instance: Type.String(),
        provider: Type.String(),
        state: BreakerStateSchema,
        reportedAt: Type.String({ format: 'date-time' }),
      }),
      { description: 'what each live instance last reported (a report lives 30 s)' },
    ),
  },
  { $id: 'CapabilityWithReports' },
);

export const VerifyBodySchema = Type.Object(
  {
    key: Type.String({ maxLength: 256, description: 'the key a caller presented' }),
    scopes: Type.Optional(
      Type.Array(Type.String({ maxLength: 128 }), { maxItems: 50, description: 'scopes it must hold' }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ key: 'pk_live_h8auVgyWAt1JbCp8EGcAV1JGl1kmSu1j', scopes: ['notify:send'] }],
  },
);

export const VerifiedSchema = Type.Union(
  [
    Type.Object({
      valid: Type.Literal(true),
      projectId: Type.String({ format: 'uuid' }),
      projectSlug: Type.String(),
      mode: Type.Union([Type.Literal('test'), Type.Literal('live')]),
      keyId: Type.String({ format: 'uuid' }),
      scopes: Type.Array(Type.String()),
    }),
    Type.Object({
      valid: Type.Literal(false),
      code: Type.Union([
        Type.Literal('API_KEY_INVALID'),
        Type.Literal('API_KEY_REVOKED'),
        Type.Literal('API_KEY_EXPIRED'),
        Type.Literal('INSUFFICIENT_SCOPE'),
      ]),
      missingScopes: Type.Optional(Type.Array(Type.String())),
    }),
  ],
  { $id: 'KeyVerified' },
);
