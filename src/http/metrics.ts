// Each answer's duration by route template (never the raw URL: ids would make a series per resource),
// method and status code. The series of a route are kept in a map, so an answer costs one lookup.
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics/metrics.ts';

type Observe = (seconds: number) => void;

export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics) {
  const series = new Map<string, Observe>();
  app.addHook('onResponse', (request, reply, done) => {
    // unmatched: every unknown path is one series
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let observe = series.get(key);
    if (!observe) {
      const child = metrics.requestDuration.labels(route, request.method, String(reply.statusCode));
      observe = (seconds) => child.observe(seconds);
      series.set(key, observe);
    }
    observe(reply.elapsedTime / 1000);
    done();
  });
}
