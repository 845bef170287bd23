// Events: publishing (for products that run as separate services), the project's event log, and reading
// one with its deliveries. Sending one again: event-sends.ts.
import {
  EventPageSchema,
  EventPublishedSchema,
  EventSchema,
  EventsQuerySchema,
  PublishEventBodySchema,
} from '../../events/schema.ts';
import { MAX_EVENT_DATA_BYTES } from '../../events/service.ts';
import { memberText } from '../../lib/json-text.ts';
import { pageOf } from '../../lib/pagination.ts';
import { errorResponses } from '../problems.ts';
import { IdempotencyHeaders, IdParamsSchema, projectIdOf, ref, routes } from './common.ts';

const tags = ['events'];
const SCHEMAS = [EventPublishedSchema, EventSchema, EventPageSchema];

export const eventRoutes = routes(SCHEMAS, (app) => {
  app.post(
    '/core/v1/events',
    {
      config: { access: 'events:write' },
      bodyLimit: MAX_EVENT_DATA_BYTES + 64 * 1024, // the payload limit, plus room for type and subjects
      schema: {
        operationId: 'publishEvent',
        summary: 'Publish an event of the project to its subscribed endpoints',
        tags,
        headers: IdempotencyHeaders,
        body: PublishEventBodySchema,
        response: { 202: ref('EventPublished'), ...errorResponses(400, 403, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      reply.code(202);
      // The data as the publisher wrote it, cut from the body's text (the schema required it).
      const data = memberText(request.bodyText, 'data') as string;
      return request.services.events.publish(projectIdOf(request), { ...request.body, data });
    },
  );

  app.get(
    '/core/v1/events',
    {
      config: { access: 'webhooks:read' },
      schema: {
        operationId: 'listEvents',
        summary: 'The project’s events, newest first, each with its deliveries counted by state',
        description:
          'type keeps the events of that type; state, those with a delivery in that state; since and until, a window of their time.',
        tags,
        querystring: EventsQuerySchema,
        response: { 200: ref('EventPage'), ...errorResponses(400, 403) },
      },
    },
    async (request) => {
      const { limit: _limit, cursor: _cursor, ...only } = request.query;
      return request.services.deliveryLog.ofProject(projectIdOf(request), pageOf(request.query), only);
    },
  );

  app.get(
    '/core/v1/events/:id',
    {
      config: { access: 'webhooks:read' },
      schema: {
        operationId: 'getEvent',
        summary: 'An event with its deliveries and their states',
        tags,
        params: IdParamsSchema,
        response: { 200: ref('Event'), ...errorResponses(403, 404) },
      },
    },
    async (request, reply) => {
      const { head, data, deliveries } = await request.services.events.read(
        projectIdOf(request),
        request.params.id,
      );
      // The data goes out as it was published: its stored text, spliced in, never re-serialised.
      reply.type('application/json; charset=utf-8');
      return `${JSON.stringify(head).slice(0, -1)},"data":${data},"deliveries":${JSON.stringify(deliveries)}}`;
    },
  );
});
