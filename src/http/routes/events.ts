// Events: publishing (for products that run as separate services), reading one with its deliveries,
// replaying it, and the test event of an endpoint; plus an endpoint's delivery history.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { eventCatalogue } from '../../catalogue/service.ts';
import type { Context } from '../../context.ts';
import { deliveryLog } from '../../delivery-log/log.ts';
import { notFound } from '../../errors.ts';
import {
  EndpointDeliveriesQuerySchema,
  EndpointDeliveriesSchema,
  EventPublishedSchema,
  EventSchema,
  PublishEventBodySchema,
  WebhookReplayResultSchema,
  WebhookTestSentSchema,
} from '../../events/schema.ts';
import { eventService, MAX_EVENT_DATA_BYTES } from '../../events/service.ts';
import { eventStore } from '../../events/store.ts';
import { memberText } from '../../json-text.ts';
import { pageOf } from '../../pagination.ts';
import { IdParamsSchema } from '../../webhooks/schema.ts';
import { errorResponses } from '../problems.ts';
import { IdempotencyHeaders, projectIdOf, ref, writeScope } from './common.ts';

const TAGS = ['events'];

export const eventRoutes =
  (context: Context): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const schema of [
      EventPublishedSchema,
      WebhookReplayResultSchema,
      WebhookTestSentSchema,
      EventSchema,
      EndpointDeliveriesSchema,
    ]) {
      app.addSchema(schema);
    }
    /** Events in the request's transaction. */
    const events = (request: FastifyRequest) => {
      const { tx, ...hooks } = writeScope(request);
      const catalogue = eventCatalogue(context.db, context.registry, context.schemas);
      return eventService(tx, {
        ...context,
        ...hooks,
        retentionDays: context.config.retentionDays,
        wake: context.wakeWorkers,
        checkData: (projectId: string, type: string, data: string, fresh: boolean) =>
          catalogue.check(projectId, type, data, context.declaredTypes, fresh),
        forecast: context.deliveryForecast,
      });
    };

    app.post(
      '/core/v1/events',
      {
        config: { access: 'events:write' },
        bodyLimit: MAX_EVENT_DATA_BYTES + 64 * 1024, // the payload limit, plus room for type and subjects
        schema: {
          operationId: 'publishEvent',
          summary: 'Publish an event of the project to its subscribed endpoints',
          tags: TAGS,
          headers: IdempotencyHeaders,
          body: PublishEventBodySchema,
          response: { 202: ref('EventPublished'), ...errorResponses(400, 403, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        reply.code(202);
        // The data as the publisher wrote it, cut from the body's text (the schema required it).
        const data = memberText(request.bodyText, 'data') as string;
        return events(request).publish(projectIdOf(request), { ...request.body, data });
      },
    );

    app.get(
      '/core/v1/events/:id',
      {
        config: { access: 'webhooks:read' },
        schema: {
          operationId: 'getEvent',
          summary: 'An event with its deliveries and their states',
          tags: TAGS,
          params: IdParamsSchema,
          response: { 200: ref('Event'), ...errorResponses(403, 404) },
        },
      },
      async (request, reply) => {
        const projectId = projectIdOf(request);
        const event = await eventStore(context.db).find(
          projectId,
          request.params.id,
          context.config.retentionDays,
        );
        if (!event) throw notFound('event');
        const deliveries = await deliveryLog(context.db).ofEvent(projectId, event.id, event.created_at);
        const head = {
          id: event.id,
          type: event.type,
          createdAt: event.created_at.toISOString(),
          redacted: event.redacted_at !== null,
        };
        // The data goes out as it was published: its stored text, spliced in, never re-serialised.
        reply.type('application/json; charset=utf-8');
        return `${JSON.stringify(head).slice(0, -1)},"data":${event.data},"deliveries":${JSON.stringify(deliveries)}}`;
      },
    );

    app.post(
      '/core/v1/events/:id/replay',
      {
        config: { access: 'webhooks:write' },
        schema: {
          operationId: 'replayEvent',
          summary:
            'Resend an event to the active endpoints subscribed to its type: same eventId, new deliveries',
          tags: TAGS,
          headers: IdempotencyHeaders,
          params: IdParamsSchema,
          response: { 200: ref('WebhookReplayResult'), ...errorResponses(400, 403, 404, 409, 422) },
        },
      },
      async (request) => events(request).replay(projectIdOf(request), request.params.id),
    );

    app.post(
      '/core/v1/webhook-endpoints/:id/test',
      {
        config: { access: 'webhooks:write' },
        schema: {
          operationId: 'sendTestEvent',
          summary: 'Send a signed core.webhook.test event to this endpoint only',
          tags: ['webhooks'],
          headers: IdempotencyHeaders,
          params: IdParamsSchema,
          response: { 200: ref('WebhookTestSent'), ...errorResponses(400, 403, 404, 409, 422) },
        },
      },
      async (request) => events(request).sendTest(projectIdOf(request), request.params.id),
    );

    app.get(
      '/core/v1/webhook-endpoints/:id/deliveries',
      {
        config: { access: 'webhooks:read' },
        schema: {
          operationId: 'listEndpointDeliveries',
          summary: 'The endpoint’s deliveries with their attempts, newest first, a page at a time',
          description: 'state and eventType keep the deliveries of that state, or of events of that type.',
          tags: ['webhooks'],
          params: IdParamsSchema,
          querystring: EndpointDeliveriesQuerySchema,
          response: { 200: ref('EndpointDeliveries'), ...errorResponses(400, 403, 404) },
        },
      },
      async (request) =>
        deliveryLog(context.db).ofEndpoint(
          projectIdOf(request),
          request.params.id,
          pageOf(request.query),
          context.config.retentionDays,
          { state: request.query.state, eventType: request.query.eventType },
        ),
    );
  };
