// Events: publishing (for products that run as separate services), reading one with its deliveries,
// replaying it, and the test event of an endpoint; plus an endpoint's delivery history.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Context } from '../../context.ts';
import { decodeCursor, deliveryHistory } from '../../delivery/history.ts';
import { normalizeSubject } from '../../erasure/subject.ts';
import { notFound, PlatformError } from '../../errors.ts';
import {
  EndpointDeliveriesSchema,
  EventPublishedSchema,
  EventSchema,
  PageQuerySchema,
  PublishEventBodySchema,
  WebhookReplayResultSchema,
  WebhookTestSentSchema,
} from '../../events/schema.ts';
import { eventService } from '../../events/service.ts';
import { eventStore } from '../../events/store.ts';
import { IdParamsSchema } from '../../webhooks/schema.ts';
import { endpointStore } from '../../webhooks/store.ts';
import { errorResponses } from '../problems.ts';
import { idempotencyHeader, idOf, projectOf, transactionOf } from './common.ts';

export const MAX_EVENT_DATA_BYTES = 256 * 1024;
const TAGS = ['events'];
const ref = (id: string) => ({ $ref: `${id}#` });

export const eventRoutes = (context: Context) => async (app: FastifyInstance) => {
  for (const schema of [
    EventPublishedSchema,
    WebhookReplayResultSchema,
    WebhookTestSentSchema,
    EventSchema,
    EndpointDeliveriesSchema,
  ]) {
    app.addSchema(schema);
  }
  /** Events in the request's transaction; the worker is woken once it commits. */
  const events = (request: FastifyRequest) => {
    request.onCommit?.(() => context.signals.emit('deliveries'));
    return eventService(transactionOf(request), context);
  };

  app.post(
    '/core/v1/events',
    {
      config: { access: 'events:write' },
      bodyLimit: MAX_EVENT_DATA_BYTES + 64 * 1024, // the payload limit, plus room for type and subjects
      schema: {
        summary: 'Publish an event of the project to its subscribed endpoints',
        tags: TAGS,
        headers: idempotencyHeader,
        body: PublishEventBodySchema,
        response: { 202: ref('EventPublished'), ...errorResponses(400, 403, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const body = request.body as {
        type: string;
        data: Record<string, unknown>;
        subjects?: { type: string; value: string }[];
      };
      if (body.type.startsWith('core.')) {
        throw new PlatformError(
          'VALIDATION_FAILED',
          'event types under core. are reserved for the platform',
          {
            errors: [{ pointer: '/type', detail: 'the core. namespace is reserved' }],
          },
        );
      }
      if (Buffer.byteLength(JSON.stringify(body.data)) > MAX_EVENT_DATA_BYTES) {
        throw new PlatformError('PAYLOAD_TOO_LARGE', 'the event data is over 256 KiB');
      }
      const subjects = (body.subjects ?? []).map((subject) => normalizeSubject(subject));
      const projectId = projectOf(request);
      await context.limits.check(projectId, 'core', 'events_published', { db: transactionOf(request) });
      request.onCommit?.(() => context.meter.count(projectId, 'core', 'events_published'));
      reply.code(202);
      return events(request).emit({ projectId, type: body.type, data: body.data, subjects });
    },
  );

  app.get(
    '/core/v1/events/:id',
    {
      config: { access: 'webhooks:read' },
      schema: {
        summary: 'An event with its deliveries and their states',
        tags: TAGS,
        params: IdParamsSchema,
        response: { 200: ref('Event'), ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const event = await eventStore(context.db).find(projectOf(request), idOf(request));
      if (!event) throw notFound('event');
      return {
        id: event.id,
        type: event.type,
        createdAt: event.created_at.toISOString(),
        redacted: event.redacted_at !== null,
        data: event.data,
        deliveries: await deliveryHistory(context.db).ofEvent(projectOf(request), event.id),
      };
    },
  );

  app.post(
    '/core/v1/events/:id/replay',
    {
      config: { access: 'webhooks:write' },
      schema: {
        summary:
          'Resend an event to the active endpoints subscribed to its type: same eventId, new deliveries',
        tags: TAGS,
        headers: idempotencyHeader,
        params: IdParamsSchema,
        response: { 200: ref('WebhookReplayResult'), ...errorResponses(400, 403, 404, 409, 422) },
      },
    },
    async (request) => events(request).replay(projectOf(request), idOf(request)),
  );

  app.post(
    '/core/v1/webhook-endpoints/:id/test',
    {
      config: { access: 'webhooks:write' },
      schema: {
        summary: 'Send a signed core.webhook.test event to this endpoint only',
        tags: ['webhooks'],
        headers: idempotencyHeader,
        params: IdParamsSchema,
        response: { 200: ref('WebhookTestSent'), ...errorResponses(400, 403, 404, 409, 422) },
      },
    },
    async (request) => events(request).sendTest(projectOf(request), idOf(request)),
  );

  app.get(
    '/core/v1/webhook-endpoints/:id/deliveries',
    {
      config: { access: 'webhooks:read' },
      schema: {
        summary: 'The endpoint’s deliveries with their attempts, newest first, a page at a time',
        tags: ['webhooks'],
        params: IdParamsSchema,
        querystring: PageQuerySchema,
        response: { 200: ref('EndpointDeliveries'), ...errorResponses(400, 403, 404) },
      },
    },
    async (request) => {
      const query = request.query as { limit?: string; cursor?: string };
      const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      if (query.cursor !== undefined && !cursor) {
        throw new PlatformError('VALIDATION_FAILED', 'the cursor is not one this API gave', {
          errors: [{ parameter: 'cursor', detail: 'unknown cursor' }],
        });
      }
      const projectId = projectOf(request);
      if (!(await endpointStore(context.db).exists(projectId, idOf(request))))
        throw notFound('webhook endpoint');
      return deliveryHistory(context.db).ofEndpoint(
        projectId,
        idOf(request),
        Number(query.limit ?? 20),
        cursor,
      );
    },
  );
};
