// Destinations (contract 0.4): made, listed, read and changed here (a polling one's feed:
// destination-messages.ts). Every
// other sub-route of a destination is a webhook endpoint's, mounted under both (common.ts, MOUNTS).
import {
  CreateDestinationBodySchema,
  DestinationCreatedSchema,
  DestinationListSchema,
  DestinationPatchSchema,
  DestinationSchema,
} from '../../webhooks/destination-schema.ts';
import { errorResponses } from '../problems.ts';
import { IdempotencyHeaders, IdParamsSchema, projectIdOf, ref, routes } from './common.ts';

const tags = ['destinations'];
const write = { access: 'webhooks:write' as const };
const read = { access: 'webhooks:read' as const };

const SCHEMAS = [DestinationSchema, DestinationCreatedSchema, DestinationListSchema];

export const destinationRoutes = routes(SCHEMAS, (app) => {
  app.post(
    '/core/v1/destinations',
    {
      config: write,
      schema: {
        operationId: 'createDestination',
        summary:
          'Declare a destination: a webhook, a RabbitMQ exchange, a Redis stream, a NATS subject, or a feed',
        tags,
        headers: IdempotencyHeaders,
        body: CreateDestinationBodySchema,
        response: { 201: ref('DestinationCreated'), ...errorResponses(400, 403, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return request.services.destinations.create(projectIdOf(request), request.body);
    },
  );

  app.get(
    '/core/v1/destinations',
    {
      config: read,
      schema: {
        operationId: 'listDestinations',
        summary: 'The destinations of the project, of every type, oldest first; never a secret',
        tags,
        response: { 200: ref('DestinationList'), ...errorResponses(403) },
      },
    },
    async (request) => ({ data: await request.services.destinations.list(projectIdOf(request)) }),
  );

  app.get(
    '/core/v1/destinations/:id',
    {
      config: read,
      schema: {
        operationId: 'getDestination',
        summary: 'A destination: its type, target, state, rate, ordering and waiting deliveries',
        tags,
        params: IdParamsSchema,
        response: { 200: ref('Destination'), ...errorResponses(403, 404) },
      },
    },
    async (request) => request.services.destinations.get(projectIdOf(request), request.params.id),
  );

  app.patch(
    '/core/v1/destinations/:id',
    {
      config: write,
      schema: {
        operationId: 'updateDestination',
        summary: 'Change a destination with a JSON merge patch (application/merge-patch+json)',
        description:
          'target merges into the target (a new url replaces the password too); the rest as a webhook endpoint’s PATCH.',
        tags,
        headers: IdempotencyHeaders,
        params: IdParamsSchema,
        body: DestinationPatchSchema,
        response: { 200: ref('Destination'), ...errorResponses(400, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request) =>
      request.services.destinations.update(projectIdOf(request), request.params.id, request.body),
  );
});
