// Events a capability publishes on a project's behalf (docs/capabilities.md): one of its declared types,
// checked, counted and delivered as the project's own publish is.
import { CapabilityEventBodySchema, EventPublishedSchema } from '../../../events/schema.ts';
import { MAX_EVENT_DATA_BYTES } from '../../../events/service.ts';
import { CAPABILITY_SCOPE } from '../../../keys/scopes.ts';
import { memberText } from '../../../lib/json-text.ts';
import { errorResponses } from '../../problems.ts';
import { IdempotencyHeaders, ref, routes } from '../common.ts';
import { capabilityOf } from './plane.ts';

const tags = ['capability'];
const config = { access: CAPABILITY_SCOPE } as const;

export const capabilityEventRoutes = routes([EventPublishedSchema], (app) => {
  app.post(
    '/capability/v1/events',
    {
      config,
      bodyLimit: MAX_EVENT_DATA_BYTES + 64 * 1024,
      schema: {
        operationId: 'publishCapabilityEvent',
        summary: 'Publish one of the capability’s declared event types on a project’s behalf',
        description:
          'As a project’s publish: its data checked against the type’s schema, core/events_published and its limit.',
        tags,
        headers: IdempotencyHeaders,
        body: CapabilityEventBodySchema,
        response: { 202: ref('EventPublished'), ...errorResponses(400, 403, 404, 409, 413, 415, 422, 429) },
      },
    },
    async (request, reply) => {
      reply.code(202);
      const data = memberText(request.bodyText, 'data') as string;
      const { projectId, ...publication } = request.body;
      return request.services.events.publishFor(capabilityOf(request), projectId, { ...publication, data });
    },
  );
});
