import { Type } from 'typebox';
import { EventTypeSchema } from '../catalogue/schema.ts';
import { pageFields } from '../lib/pagination.ts';
import { SUBJECT_TYPES } from '../registry.ts';

/** An endpoint's test: core.webhook.test without a body, an example of a type of the catalogue with one. */
export const TestEventBodySchema = Type.Object(
  { eventType: Type.Optional(EventTypeSchema) },
  { additionalProperties: false, examples: [{ eventType: 'pay.payment.succeeded' }] },
);

export const PublishEventBodySchema = Type.Object(
  {
    type: EventTypeSchema,
    data: Type.Object(
      {},
      { additionalProperties: true, description: 'the payload, at most 256 KiB as JSON' },
    ),
    subjects: Type.Optional(
      Type.Array(
        Type.Object(
          {
            type: Type.String({ enum: [...SUBJECT_TYPES] }),
            value: Type.String({ minLength: 1, maxLength: 320 }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 100, description: 'the people the event concerns, so that erasing them redacts it' },
      ),
    ),
    orderingKey: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: 'endpoints ordered by key receive the events of one key in publish order',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        type: 'pay.payment.succeeded',
        data: { paymentId: 'pay_8Jd2', amount: 4200, currency: 'EUR' },
        subjects: [{ type: 'email', value: 'ada@example.com' }],
        orderingKey: 'customer-118',
      },
    ],
  },
);

/** A capability's publish on a project's behalf: the project's own publish, and which project. */
export const CapabilityEventBodySchema = Type.Object(
  { projectId: Type.String({ format: 'uuid' }), ...PublishEventBodySchema.properties },
  {
    additionalProperties: false,
    examples: [
      {
        projectId: '18767f97-0c9c-4522-b8cd-09b38524cd80',
        type: 'notify.message.sent',
        data: { messageId: 'msg_1', channel: 'email' },
        subjects: [{ type: 'email', value: 'ada@example.com' }],
      },
    ],
  },
);

export const EventPublishedSchema = Type.Object(
  { eventId: Type.String({ format: 'uuid' }), deliveries: Type.Integer({ minimum: 0 }) },
  { $id: 'EventPublished', examples: [{ eventId: '0193b0a4-1e0b-7d4e-9f10-a1b2c3d4e5f6', deliveries: 2 }] },
);

export const WebhookReplayResultSchema = Type.Object(
  { eventId: Type.String({ format: 'uuid' }), deliveries: Type.Integer({ minimum: 0 }) },
  { $id: 'WebhookReplayResult' },
);

export const WebhookTestSentSchema = Type.Object(
  { eventId: Type.String({ format: 'uuid' }), endpointId: Type.String({ format: 'uuid' }) },
  { $id: 'WebhookTestSent' },
);

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

const deliveryFields = {
  id: Type.String({ format: 'uuid' }),
  eventId: Type.String({ format: 'uuid' }),
  eventType: Type.String(),
  endpointId: Type.String({ format: 'uuid' }),
  kind: Type.String({ enum: ['dispatch', 'replay', 'test'] }),
  state: Type.String({ enum: ['pending', 'delivered', 'dead', 'cancelled'] }),
  attemptCount: Type.Integer(),
  nextAttemptAt: Nullable(Type.String({ format: 'date-time' })),
  waitReason: Type.Union(
    [
      Type.Literal('paused'),
      Type.Literal('ordered'),
      Type.Literal('throttled'),
      Type.Literal('retry'),
      Type.Null(),
    ],
    {
      description:
        'why a pending delivery waits: its endpoint is paused, an earlier one of its ordered lane goes first, its endpoint’s rate, or its next attempt; null when due or in flight',
    },
  ),
  lastStatus: Type.Union([Type.Integer(), Type.Null()]),
  lastError: Nullable(Type.String()),
  deliveredAt: Nullable(Type.String({ format: 'date-time' })),
  createdAt: Type.String({ format: 'date-time' }),
};

export const EventSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    type: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    redacted: Type.Boolean({ description: 'true once the payload was erased with a subject it concerns' }),
    data: Type.Object({}, { additionalProperties: true }),
    deliveries: Type.Array(Type.Object(deliveryFields)),
  },
  { $id: 'Event' },
);

export const DELIVERY_STATES = ['pending', 'delivered', 'dead', 'cancelled'] as const;

/** A page of an endpoint's deliveries, of one state or one event type when asked. */
export const EndpointDeliveriesQuerySchema = Type.Object(
  {
    ...pageFields,
    state: Type.Optional(Type.Union(DELIVERY_STATES.map((state) => Type.Literal(state)))),
    eventType: Type.Optional(EventTypeSchema),
  },
  { additionalProperties: false },
);

export const EndpointDeliveriesSchema = Type.Object(
  {
    data: Type.Array(
      Type.Object({
        ...deliveryFields,
        attempts: Type.Array(
          Type.Object({
            attempt: Type.Integer(),
            startedAt: Type.String({ format: 'date-time' }),
            durationMs: Type.Integer(),
            statusCode: Type.Union([Type.Integer(), Type.Null()]),
            error: Nullable(Type.String()),
            succeeded: Type.Boolean(),
            responseBody: Nullable(Type.String({ description: 'at most 4 KiB of the response' })),
            requestHeaders: Type.Record(Type.String(), Type.String(), {
              description:
                'the request’s headers as sent: the signature, the endpoint’s own headers and an OAuth token with their values as ***',
            }),
          }),
        ),
      }),
    ),
    nextCursor: Nullable(Type.String()),
  },
  { $id: 'EndpointDeliveries' },
);

/** The project's events, newest first: of one type, with a delivery in one state, within a time window. */
export const EventsQuerySchema = Type.Object(
  {
    ...pageFields,
    type: Type.Optional(EventTypeSchema),
    state: Type.Optional(
      Type.Union(
        DELIVERY_STATES.map((state) => Type.Literal(state)),
        { description: 'events with at least one delivery in this state' },
      ),
    ),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'from this time (inclusive)' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'to this time (exclusive)' })),
  },
  { additionalProperties: false },
);

export const EventPageSchema = Type.Object(
  {
    data: Type.Array(
      Type.Object({
        id: Type.String({ format: 'uuid' }),
        type: Type.String(),
        createdAt: Type.String({ format: 'date-time' }),
        redacted: Type.Boolean(),
        deliveries: Type.Object(
          {
            total: Type.Integer({ minimum: 0 }),
            pending: Type.Integer({ minimum: 0 }),
            delivered: Type.Integer({ minimum: 0 }),
            dead: Type.Integer({ minimum: 0 }),
            cancelled: Type.Integer({ minimum: 0 }),
          },
          { description: 'its deliveries (to every endpoint, replays and tests included) by state' },
        ),
      }),
    ),
    nextCursor: Nullable(Type.String()),
  },
  { $id: 'EventPage' },
);
