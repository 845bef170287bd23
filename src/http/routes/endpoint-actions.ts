// What an endpoint's owner does to it: pause and resume it, cancel what waits, delete it. Its signing
// secret's rotation is endpoint-secrets.ts.
import { DestinationSchema } from '../../webhooks/destination-schema.ts';
import { CancelledSchema, WebhookEndpointSchema } from '../../webhooks/schema.ts';
import { errorResponses } from '../problems.ts';
import { IdempotencyHeaders, IdParamsSchema, MOUNTS, projectIdOf, ref, routes } from './common.ts';

const config = { access: 'webhooks:write' as const };
const identified = { headers: IdempotencyHeaders, params: IdParamsSchema };
const refusals = errorResponses(400, 403, 404, 409, 422);

const SCHEMAS = [WebhookEndpointSchema, DestinationSchema, CancelledSchema];

export const endpointActionRoutes = routes(SCHEMAS, (app) => {
  for (const { path, record, tag, named } of MOUNTS) {
    const byId = { ...identified, tags: [tag] };
    for (const [action, paused] of [
      ['pause', true],
      ['resume', false],
    ] as const) {
      app.post(
        `${path}/:id/${action}`,
        {
          config,
          schema: {
            ...byId,
            operationId: named(`${action}WebhookEndpoint`, `${action}Destination`),
            summary: paused
              ? 'Pause an endpoint: its deliveries are created and held, nothing is sent'
              : 'Resume a paused endpoint: what it held goes out, oldest first',
            response: { 200: ref(record), ...refusals },
          },
        },
        async (request) =>
          request.services.webhookEndpoints.setPaused(projectIdOf(request), request.params.id, paused),
      );
    }

    app.post(
      `${path}/:id/cancel-pending`,
      {
        config,
        schema: {
          ...byId,
          operationId: named('cancelPendingDeliveries', 'cancelPendingDestinationDeliveries'),
          summary: 'Cancel the endpoint’s pending deliveries (their history stays)',
          response: { 200: ref('DeliveriesCancelled'), ...refusals },
        },
      },
      async (request) =>
        request.services.webhookEndpoints.cancelPending(projectIdOf(request), request.params.id),
    );

    app.delete(
      `${path}/:id`,
      {
        config,
        schema: {
          ...byId,
          operationId: named('deleteWebhookEndpoint', 'deleteDestination'),
          summary: 'Delete an endpoint and its secrets',
          response: { 204: { type: 'null' }, ...refusals },
        },
      },
      async (request, reply) => {
        reply.code(204); // before the write, as for a create
        await request.services.webhookEndpoints.delete(projectIdOf(request), request.params.id);
      },
    );
  }
});
