import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Context } from '../../context.ts';
import { UsageQuerySchema, UsageSchema } from '../../usage/schema.ts';
import { usageService } from '../../usage/service.ts';
import { errorResponses } from '../problems.ts';
import { projectIdOf, ref } from './common.ts';

export const usageRoutes =
  (context: Context): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(UsageSchema);
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
      async (request) => usageService(context).report(projectIdOf(request), request.query),
    );
  };
