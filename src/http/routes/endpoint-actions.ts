// What an endpoint's owner does to it: pause and resume it, cancel what waits, rotate its signing secret
// and retire the previous one, delete it.
import { CancelledSchema, WebhookEndpointSchema, WebhookSecretRotatedSchema } from '../../webhooks/schema.ts';
import { errorResponses } from '../problems.ts';
import { IdempotencyHeaders, IdParamsSchema, projectIdOf, ref, routes } from './common.ts';

const config = { access: 'webhooks:write' as const };
const byId = { headers: IdempotencyHeaders, params: IdParamsSchema, tags: ['webhooks'] };
const refusals = errorResponses(400, 403, 404, 409, 422);

const SCHEMAS = [WebhookEndpointSchema, WebhookSecretRotatedSchema, CancelledSchema];

export const endpointActionRoutes = routes(SCHEMAS, (app) => {
  for (const [action, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    app.post(
      `/core/v1/webhook-endpoints/:id/${action}`,
      {
        config,
        schema: {
          ...byId,
          operationId: `${action}WebhookEndpoint`,
          summary: paused
            ? 'Pause an endpoint: its deliveries are created and held, nothing is sent'
            : 'Resume a paused endpoint: what it held goes out, oldest first',
          response: { 200: ref('WebhookEndpoint'), ...refusals },
        },
      },
      async (request) =>
        request.services.webhookEndpoints.setPaused(projectIdOf(request), request.params.id, paused),
    );
  }

  app.post(
    '/core/v1/webhook-endpoints/:id/cancel-pending',
    {
      config,
      schema: {
        ...byId,
        operationId: 'cancelPendingDeliveries',
        summary: 'Cancel the endpoint’s pending deliveries (their history stays)',
        response: { 200: ref('DeliveriesCancelled'), ...refusals },
      },
    },
    async (request) =>
      request.services.webhookEndpoints.cancelPending(projectIdOf(request), request.params.id),
  );

  app.post(
    '/core/v1/webhook-endpoints/:id/rotate-secret',
    {
      config,
      schema: {
        ...byId,
        operationId: 'rotateWebhookSecret',
        summary: 'Make a new secret the active one; the previous one keeps signing until retired',
        response: { 200: ref('WebhookSecretRotated'), ...refusals },
      },
    },
    async (request) =>
      request.services.webhookEndpoints.rotateSecret(projectIdOf(request), request.params.id),
  );

  app.post(
    '/core/v1/webhook-endpoints/:id/retire-previous-secret',
    {
      config,
      schema: {
        ...byId,
        operationId: 'retirePreviousWebhookSecret',
        summary: 'End a rotation: the previous secret stops signing',
        response: { 200: ref('WebhookEndpoint'), ...refusals },
      },
    },
    async (request) =>
      request.services.webhookEndpoints.retirePreviousSecret(projectIdOf(request), request.params.id),
  );

  app.delete(
    '/core/v1/webhook-endpoints/:id',
    {
      config,
      schema: {
        ...byId,
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete an endpoint and its secrets',
        response: { 204: { type: 'null' }, ...refusals },
      },
    },
    async (request, reply) => {
      reply.code(204); // before the write, as for a create
      await request.services.webhookEndpoints.delete(projectIdOf(request), request.params.id);
    },
  );
});
