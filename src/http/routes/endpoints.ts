// Webhook endpoints (spec section 4, and delivery control's GET and PATCH): declared, listed, read and
// changed. What an endpoint's owner does to one (deleting it too) is in endpoint-actions.ts; its attempts by
// hour, endpoint-stats.ts.
import {
  CreateEndpointBodySchema,
  EndpointPatchSchema,
  WebhookEndpointCreatedSchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
} from '../../webhooks/schema.ts';
import { errorResponses } from '../problems.ts';
import { IdempotencyHeaders, IdParamsSchema, projectIdOf, ref, routes } from './common.ts';

const tags = ['webhooks'];
const write = { access: 'webhooks:write' as const };
const read = { access: 'webhooks:read' as const };
const byId = { headers: IdempotencyHeaders, params: IdParamsSchema, tags };

const SCHEMAS = [WebhookEndpointSchema, WebhookEndpointCreatedSchema, WebhookEndpointListSchema];

export const endpointRoutes = routes(SCHEMAS, (app) => {
  app.post(
    '/core/v1/webhook-endpoints',
    {
      config: write,
      schema: {
        operationId: 'createWebhookEndpoint',
        summary: 'Declare an endpoint that receives the events of the project',
        tags,
        headers: IdempotencyHeaders,
        body: CreateEndpointBodySchema,
        response: { 201: ref('WebhookEndpointCreated'), ...errorResponses(400, 403, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      reply.code(201); // before the write: a write in one statement records its answer with its effect
      return request.services.webhookEndpoints.create(projectIdOf(request), request.body);
    },
  );

  app.get(
    '/core/v1/webhook-endpoints',
    {
      config: read,
      schema: {
        operationId: 'listWebhookEndpoints',
        summary: 'The endpoints of the project, oldest first; never a secret',
        tags,
        response: { 200: ref('WebhookEndpointList'), ...errorResponses(403) },
      },
    },
    async (request) => ({
      data: await request.services.webhookEndpoints.list(projectIdOf(request), true),
    }),
  );

  app.get(
    '/core/v1/webhook-endpoints/:id',
    {
      config: read,
      schema: {
        operationId: 'getWebhookEndpoint',
        summary: 'An endpoint: its state (active, paused), rate, ordering and waiting deliveries',
        tags,
        params: IdParamsSchema,
        response: { 200: ref('WebhookEndpoint'), ...errorResponses(403, 404) },
      },
    },
    async (request) => request.services.webhookEndpoints.get(projectIdOf(request), request.params.id),
  );

  app.patch(
    '/core/v1/webhook-endpoints/:id',
    {
      config: write,
      schema: {
        ...byId,
        operationId: 'updateWebhookEndpoint',
        summary: 'Change an endpoint with a JSON merge patch (application/merge-patch+json)',
        description:
          'url (the address policy applies), eventTypes, rateLimitPerSecond, ordering, active. ' +
          'active: true re-enables a disabled endpoint with its secrets; false disables it and cancels what is pending.',
        body: EndpointPatchSchema,
        response: { 200: ref('WebhookEndpoint'), ...errorResponses(400, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request) =>
      request.services.webhookEndpoints.update(projectIdOf(request), request.params.id, request.body),
  );
});
