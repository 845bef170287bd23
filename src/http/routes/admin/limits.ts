// The management API's daily limits of a project (read, each default or the project's; set; cleared), and
// its usage, as the project itself reads it.
import {
  EffectiveLimitSchema,
  EffectiveLimitsSchema,
  LimitBodySchema,
  LimitParamsSchema,
  UsageQuerySchema,
  UsageSchema,
} from '../../../usage/schema.ts';
import { errorResponses } from '../../problems.ts';
import { IdempotencyHeaders, IdParamsSchema, ref, routes } from '../common.ts';

const tags = ['admin'];
const config = { access: 'limits:manage' as const };
const byLimit = { tags, headers: IdempotencyHeaders, params: LimitParamsSchema };

export const adminLimitRoutes = routes([EffectiveLimitSchema, EffectiveLimitsSchema, UsageSchema], (app) => {
  app.get(
    '/admin/v1/projects/:id/usage',
    {
      config,
      schema: {
        operationId: 'getProjectUsage',
        summary: "The project's usage by UTC day, capability and metric, with its daily limits",
        tags,
        params: IdParamsSchema,
        querystring: UsageQuerySchema,
        response: { 200: ref('Usage'), ...errorResponses(400, 403, 404) },
      },
    },
    async (request) => {
      const { projects, usage } = request.services;
      return usage.report((await projects.get(request.params.id)).id, request.query);
    },
  );

  app.get(
    '/admin/v1/projects/:id/limits',
    {
      config,
      schema: {
        operationId: 'listProjectLimits',
        summary: "The project's daily limits, each marked default or project",
        tags,
        params: IdParamsSchema,
        response: { 200: ref('EffectiveLimits'), ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const { projects, limits } = request.services;
      const project = await projects.get(request.params.id);
      return { data: await limits.effective(project.id) };
    },
  );

  app.put(
    '/admin/v1/projects/:id/limits/:capability/:metric',
    {
      config,
      schema: {
        ...byLimit,
        operationId: 'setProjectLimit',
        summary: "Set the project's daily limit of a metric (every process applies it before this answer)",
        body: LimitBodySchema,
        response: { 200: ref('EffectiveLimit'), ...errorResponses(400, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request) => {
      const { projects, limits } = request.services;
      const { id, capability, metric } = request.params;
      const project = await projects.get(id);
      return limits.set(project.id, { capability, metric, dailyLimit: request.body.dailyLimit });
    },
  );

  app.delete(
    '/admin/v1/projects/:id/limits/:capability/:metric',
    {
      config,
      schema: {
        ...byLimit,
        operationId: 'clearProjectLimit',
        summary: "Clear the project's daily limit of a metric: back to the default",
        response: { 204: { type: 'null' }, ...errorResponses(400, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const { projects, limits } = request.services;
      const { id, capability, metric } = request.params;
      await limits.clear((await projects.get(id)).id, capability, metric);
      reply.code(204);
    },
  );
});
