// The request limits (usage/request-limits.ts) as an onRequest hook after authentication; callback-style,
// so that a request the caches admit costs no promise.
import type { FastifyInstance } from 'fastify';
import { PlatformError } from '../errors.ts';
import type { RequestLimits } from '../usage/request-limits.ts';

export function registerRequestLimits(app: FastifyInstance, limits: RequestLimits) {
  app.addHook('onRequest', (request, _reply, done) => {
    const principal = request.principal;
    if (!principal) return done();
    const admitted = limits.admit(principal.keyId, principal.project.id);
    if (admitted === undefined) return done();
    if (admitted instanceof PlatformError) return done(admitted);
    admitted.then(() => done(), done);
  });
}
