// Each answer's duration by route template (never the raw URL: ids would make a series per resource),
// method and status code; every unknown path is one series, `unmatched`.
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics/metrics.ts';

export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics) {
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requestDuration.observe(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}
