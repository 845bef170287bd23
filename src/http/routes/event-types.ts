// The event-type catalogue (docs/api.md, Delivery control): what a project emits, with the schemas its
// events' data are checked against.
import {
  EventTypeListSchema,
  EventTypeParamsSchema,
  EventTypeRecordSchema,
  NewEventTypeParamsSchema,
  PutEventTypeBodySchema,
} from '../../catalogue/schema.ts';
import { errorResponses } from '../problems.ts';
import { IdempotencyHeaders, projectIdOf, ref, routes } from './common.ts';

const tags = ['event-types'];
const write = { access: 'events:write' as const };

export const eventTypeRoutes = routes([EventTypeRecordSchema, EventTypeListSchema], (app) => {
  app.get(
    '/core/v1/event-types',
    {
      config: { access: 'webhooks:read' },
      schema: {
        operationId: 'listEventTypes',
        summary: 'The event types of the project and of the platform, by name, with their subscribers',
        tags,
        response: { 200: ref('EventTypeList'), ...errorResponses(403) },
      },
    },
    async (request) => ({ data: await request.services.catalogue.list(projectIdOf(request)) }),
  );

  app.put(
    '/core/v1/event-types/:name',
    {
      config: write,
      // A schema and an example of at most 64 KiB each, and a description: a larger body is refused
      // before it is read, rather than parsed and fingerprinted on the event loop first.
      bodyLimit: 192 * 1024,
      schema: {
        operationId: 'putEventType',
        summary:
          'Declare an event type (or replace it): a description, a JSON Schema of its data, an example',
        description:
          'Events of a type with a schema are checked on publish. Names under core. are the platform’s.',
        tags,
        headers: IdempotencyHeaders,
        params: NewEventTypeParamsSchema,
        body: PutEventTypeBodySchema,
        response: { 200: ref('EventType'), ...errorResponses(400, 403, 409, 413, 415, 422) },
      },
    },
    async (request) =>
      request.services.catalogue.put(projectIdOf(request), request.params.name, request.body),
  );

  app.delete(
    '/core/v1/event-types/:name',
    {
      config: write,
      schema: {
        operationId: 'deleteEventType',
        summary: 'Forget a declared event type (events of it may still be published, unchecked)',
        tags,
        headers: IdempotencyHeaders,
        params: EventTypeParamsSchema,
        response: { 204: { type: 'null' }, ...errorResponses(400, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      await request.services.catalogue.delete(projectIdOf(request), request.params.name);
      reply.code(204);
    },
  );
});
