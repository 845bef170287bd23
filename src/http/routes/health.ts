// GET /api/health (any valid key; 503 with a Health body when the database is unreachable), and the
// unauthenticated probes for orchestrators: /livez (the process runs) and /readyz (the database answers).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Context } from '../../context.ts';
import { HealthSchema, ProbeSchema } from '../../health/schema.ts';
import { errorResponses } from '../problems.ts';

export const healthRoutes =
  (context: Context): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { health } = context;
    app.addSchema(HealthSchema);
    const healthRef = { $ref: 'Health#' };

    app.get(
      '/api/health',
      {
        config: { access: 'key', onOutage: () => health.report() },
        schema: {
          summary: 'Liveness and readiness of the service',
          tags: ['health'],
          response: { ...errorResponses(), 200: healthRef, 503: healthRef },
        },
      },
      async (_request, reply) => {
        const { statusCode, body } = await health.report();
        return reply.code(statusCode).send(body);
      },
    );

    const probe = {
      config: { access: 'public' as const },
      schema: { tags: ['health'], security: [], response: { 200: ProbeSchema, 503: ProbeSchema } },
    };
    app.get('/livez', probe, async () => ({ status: 'alive' }));
    app.get('/readyz', probe, async (_request, reply) =>
      (await health.ready()) ? { status: 'ready' } : reply.code(503).send({ status: 'database unreachable' }),
    );
  };
