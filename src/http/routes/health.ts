// GET /api/health (any valid key; 503 with a Health body when the database is unreachable; with a
// project's key, the state of each of its endpoints), and the
// unauthenticated probes for orchestrators: /livez (the process runs) and /readyz (it can serve).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Context } from '../../context.ts';
import { HealthSchema, ProbeSchema } from '../../health/schema.ts';
import { errorResponses } from '../problems.ts';

export const healthRoutes =
  (context: Pick<Context, 'health'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { health } = context;
    app.addSchema(HealthSchema);
    const healthRef = { $ref: 'Health#' };

    app.get(
      '/api/health',
      {
        config: { access: 'key', dailyAllowance: false, onOutage: () => health.report() },
        schema: {
          operationId: 'getHealth',
          summary: 'Liveness and readiness of the service',
          tags: ['health'],
          response: { ...errorResponses(), 200: healthRef, 503: healthRef },
        },
      },
      async (request, reply) => {
        const { statusCode, body } = await health.report();
        const project = request.principal?.project;
        if (project && body.db === 'up') {
          body.endpoints = await request.services.webhookEndpoints.states(project.id);
        }
        return reply.code(statusCode).send(body);
      },
    );

    const probe = (operationId: string, summary: string) => ({
      config: { access: 'public' as const },
      schema: {
        operationId,
        summary,
        tags: ['health'],
        security: [],
        response: { 200: ProbeSchema, 503: ProbeSchema },
      },
    });
    app.get('/livez', probe('getLiveness', 'The process is alive (no key)'), async () => ({
      status: 'alive',
    }));
    // Not ready while the database is unreachable, migrations are pending, or the process is stopping.
    const ready = probe(
      'getReadiness',
      'The process can serve: the database answers with every migration (no key)',
    );
    app.get('/readyz', ready, async (_request, reply) => {
      if (app.drain?.draining) return reply.code(503).send({ status: 'stopping' });
      const { ready, reason } = await health.ready();
      return ready ? { status: 'ready' } : reply.code(503).send({ status: reason ?? 'not ready' });
    });
  };
