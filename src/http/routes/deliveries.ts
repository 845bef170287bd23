// Deliveries: an endpoint's, newest first with their attempts, and one retried now. An endpoint's are under
// its webhook endpoint and under its destination alike (common.ts, MOUNTS). Its history re-sent in bulk is
// recovery.ts.
import { EndpointDeliveriesQuerySchema, EndpointDeliveriesSchema } from '../../events/schema.ts';
import { pageOf } from '../../lib/pagination.ts';
import { RetriedSchema } from '../../recovery/schema.ts';
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

export const deliveryRoutes = routes([EndpointDeliveriesSchema, RetriedSchema], (app) => {
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
});

/** An endpoint's deliveries, under one mount. */
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
}
