// Destinations' schemas (contract 0.4): a destination is a webhook endpoint's record with `type` and
// `target` in place of `url`, made, listed and changed under /core/v1/destinations; a polling one's feed.
import { type TObject, Type } from 'typebox';
import { MAX_URL_LENGTH } from './address-policy.ts';
import {
  EventTypesSchema,
  endpointExample,
  endpointFields,
  OrderingSchema,
  RateSchema,
  receiverChanges,
  receiverFields,
} from './schema.ts';
import { DESTINATION_TYPES } from './targets.ts';

const TypeSchema = Type.Union(
  DESTINATION_TYPES.map((type) => Type.Literal(type)),
  {
    description:
      'webhook (HTTPS), rabbitmq, redis (a stream), nats (JetStream) or polling (a feed read with GET …/messages)',
  },
);

/** A NATS subject to publish on: dot-separated tokens, no wildcards. */
const SUBJECT = '^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$';

const TargetInputSchema = Type.Object(
  {
    url: Type.Optional(
      Type.String({
        maxLength: MAX_URL_LENGTH,
        description:
          'webhook: a public HTTPS address; rabbitmq: amqp(s)://user:password@host:port/vhost; redis: redis(s)://user:password@host:port/db; nats: nats(s)://user:password@host:port. A password is write-only',
      }),
    ),
    exchange: Type.Optional(
      Type.String({ maxLength: 255, description: 'rabbitmq: the exchange (it must exist)' }),
    ),
    routingKey: Type.Optional(Type.String({ maxLength: 255, description: 'rabbitmq: the routing key' })),
    stream: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: 'redis: the stream (it must exist)' }),
    ),
    maxLen: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000_000,
        description: 'redis: the stream capped near this length',
      }),
    ),
    subject: Type.Optional(
      Type.String({
        maxLength: 255,
        pattern: SUBJECT,
        description: 'nats: the subject a JetStream stream takes',
      }),
    ),
  },
  { additionalProperties: false, description: 'where it sends: {} for polling' },
);

const TargetSchema = Type.Object(
  {
    url: Type.Optional(Type.String({ description: 'a password in it shown as ***' })),
    exchange: Type.Optional(Type.String()),
    routingKey: Type.Optional(Type.String()),
    stream: Type.Optional(Type.String()),
    maxLen: Type.Optional(Type.Integer()),
    subject: Type.Optional(Type.String()),
  },
  { description: 'where it sends; {} for polling' },
);

export const CreateDestinationBodySchema = Type.Object(
  { type: TypeSchema, target: TargetInputSchema, eventTypes: EventTypesSchema, ...receiverFields },
  {
    additionalProperties: false,
    examples: [
      {
        type: 'rabbitmq',
        target: { url: 'amqps://platform:s3cret@mq.example.com/prod', exchange: 'events', routingKey: 'pay' },
        eventTypes: ['pay.*'],
      },
    ],
  },
);

const { url: _url, ...withoutUrl } = endpointFields;
const destinationFields = { ...withoutUrl, type: TypeSchema, target: TargetSchema };
const destinationExample = (() => {
  const { url: _, ...rest } = endpointExample;
  return {
    ...rest,
    type: 'rabbitmq',
    target: { url: 'amqps://platform:***@mq.example.com/prod', exchange: 'events', routingKey: 'pay' },
  };
})();

export const DestinationSchema = Type.Object(destinationFields, {
  $id: 'Destination',
  examples: [destinationExample],
});

export const DestinationCreatedSchema = Type.Object(
  {
    ...destinationFields,
    secret: Type.String({ description: 'whsec_…, shown this one time only: it signs every message' }),
    unknownEventTypes: Type.Array(Type.String()),
  },
  { $id: 'DestinationCreated' },
);

const Last24h = Type.Object({
  attempts: Type.Integer({ minimum: 0 }),
  succeeded: Type.Integer({ minimum: 0 }),
});

export const DestinationListSchema = Type.Object(
  { data: Type.Array(Type.Object({ ...destinationFields, last24h: Last24h })) },
  { $id: 'DestinationList' },
);

export const DestinationPatchSchema: TObject = Type.Object(
  {
    target: Type.Optional(TargetInputSchema),
    eventTypes: Type.Optional(EventTypesSchema),
    rateLimitPerSecond: Type.Optional(RateSchema),
    ordering: Type.Optional(OrderingSchema),
    active: Type.Optional(Type.Boolean()),
    ...receiverChanges,
  },
  { additionalProperties: false, examples: [{ target: { routingKey: 'payments' } }] },
);

export const MessagesQuerySchema = Type.Object(
  {
    cursor: Type.Optional(
      Type.String({ maxLength: 100, description: 'the nextCursor of the page before; none for the start' }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  },
  { additionalProperties: false },
);

export const DestinationMessagesSchema = Type.Object(
  {
    data: Type.Array(
      Type.Object({
        eventId: Type.String({ format: 'uuid', description: 'the webhook-id: a repeat has the same' }),
        type: Type.String(),
        timestamp: Type.String({ format: 'date-time' }),
        payload: Type.Record(Type.String(), Type.Unknown(), { description: 'the webhook payload' }),
      }),
    ),
    nextCursor: Type.String({
      description: 'where to read from next; an empty page answers the cursor it was given',
    }),
  },
  { $id: 'DestinationMessages' },
);
