import { UsageQuerySchema, UsageSchema } from '../../usage/schema.ts';
import { errorResponses } from '../problems.ts';
import { projectIdOf, ref, routes } from './common.ts';

export const usageRoutes = routes([UsageSchema], (app) => {
  app.get(
    '/core/v1/usage',
    {
      config: { access: 'usage:read', dailyAllowance: false },
      schema: {
        operationId: 'getUsage',
        summary: 'Usage by UTC day, capability and metric, with the daily limits',
        tags: ['usage'],
        querystring: UsageQuerySchema,
        response: { 200: ref('Usage'), ...errorResponses(400, 403) },
      },
    },
    async (request) => request.services.usage.report(projectIdOf(request), request.query),
  );
});
