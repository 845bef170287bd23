// An endpoint's history re-sent in bulk by a background job (with a dry run), and a job's progress; under
// its webhook endpoint and under its destination alike (common.ts, MOUNTS).
import { JobSchema, RecoverBodySchema, RecoverySchema } from '../../recovery/schema.ts';
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

export const recoveryRoutes = routes([RecoverySchema, JobSchema], (app) => {
  for (const mount of MOUNTS) recoverRoute(app, mount);

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
});

/** An endpoint's recovery, under one mount. */
function recoverRoute(app: RouteApp, { path, tag, named }: (typeof MOUNTS)[number]) {
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
