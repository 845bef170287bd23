// Deliveries: an endpoint's, newest first with their attempts; one retried now; an endpoint's history
// re-sent in bulk by a background job (with a dry run), and the job's progress. An endpoint's are under its
// webhook endpoint and under its destination alike (common.ts, MOUNTS).
import { EndpointDeliveriesQuerySchema, EndpointDeliveriesSchema } from '../../events/schema.ts';
import { pageOf } from '../../lib/pagination.ts';
import { JobSchema, RecoverBodySchema, RecoverySchema, RetriedSchema } from '../../recovery/schema.ts';
import { errorResponses } from '../problems.ts';
import {
  IdempotencyHeaders,
  IdParamsSchema,
  MOUNTS,
  projectIdOf,
  type RouteApp,
  ref,
  routes,
} from './common.ts';

const write = { access: 'webhooks:write' as const };
const byId = { headers: IdempotencyHeaders, params: IdParamsSchema, tags: ['deliveries'] };

export const deliveryRoutes = routes(
  [EndpointDeliveriesSchema, RetriedSchema, RecoverySchema, JobSchema],
  (app) => {
    for (const mount of MOUNTS) endpointDeliveryRoutes(app, mount);

    app.post(
      '/core/v1/deliveries/:id/retry',
      {
        config: write,
        schema: {
          ...byId,
          operationId: 'retryDelivery',
          summary: 'Send a dead or waiting delivery now (a dead one gets one more attempt)',
          response: { 202: ref('DeliveryRetried'), ...errorResponses(400, 403, 404, 409, 422) },
        },
      },
      async (request, reply) => {
        reply.code(202);
        return request.services.recovery.retry(projectIdOf(request), request.params.id);
      },
    );

    app.get(
      '/core/v1/jobs/:id',
      {
        config: { access: 'webhooks:read' },
        schema: {
          operationId: 'getJob',
          summary: 'A background job and its progress',
          tags: ['deliveries'],
          params: IdParamsSchema,
          response: { 200: ref('Job'), ...errorResponses(403, 404) },
        },
      },
      async (request) => request.services.jobs.get(projectIdOf(request), request.params.id),
    );
  },
);

/** An endpoint's deliveries and its recovery, under one mount. */
function endpointDeliveryRoutes(app: RouteApp, { path, tag, named }: (typeof MOUNTS)[number]) {
  app.get(
    `${path}/:id/deliveries`,
    {
      config: { access: 'webhooks:read' },
      schema: {
        operationId: named('listEndpointDeliveries', 'listDestinationDeliveries'),
        summary: 'The endpoint’s deliveries with their attempts, newest first, a page at a time',
        description: 'state and eventType keep the deliveries of that state, or of events of that type.',
        tags: [tag],
        params: IdParamsSchema,
        querystring: EndpointDeliveriesQuerySchema,
        response: { 200: ref('EndpointDeliveries'), ...errorResponses(400, 403, 404) },
      },
    },
    async (request) => {
      const { state, eventType } = request.query;
      const page = pageOf(request.query);
      const log = request.services.deliveryLog;
      return log.ofEndpoint(projectIdOf(request), request.params.id, page, { state, eventType });
    },
  );

  app.post(
    `${path}/:id/recover`,
    {
      config: write,
      schema: {
        ...byId,
        tags: [tag],
        operationId: named('recoverWebhookEndpoint', 'recoverDestination'),
        summary:
          'Re-send the events whose latest delivery to the endpoint is dead (or delivered, or cancelled)',
        description:
          'Filtered by event type and a window of the events’ time; dryRun answers the count only. At most 100,000 events per job.',
        body: RecoverBodySchema,
        response: {
          200: ref('Recovery'),
          202: ref('Recovery'),
          ...errorResponses(400, 403, 404, 409, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const { recovery } = request.services;
      const result = await recovery.recover(projectIdOf(request), request.params.id, request.body);
      reply.code(result.jobId ? 202 : 200);
      return result;
    },
  );
}
