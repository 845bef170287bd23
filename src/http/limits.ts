// The request limits (usage/request-limits.ts) as an onRequest hook after authentication; callback-style,
// so that a request the caches admit costs no promise.
import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * false on reads that explain or recover from a limit (usage, projects/me, health): counted toward
     * the day's requests, never refused by the daily allowance (the request rate still applies).
     */
    dailyAllowance?: boolean;
  }
}

import { PlatformError } from '../lib/errors.ts';
import type { RequestLimits } from '../usage/request-limits.ts';

export function registerRequestLimits(app: FastifyInstance, limits: RequestLimits) {
  app.addHook('onRequest', (request, _reply, done) => {
    const principal = request.principal;
    // A capability's key speaks for a whole product (its verifications are its callers' requests): its
    // rate is its own service's to bound, and it has no project to count against.
    if (!principal || principal.kind === 'capability') return done();
    const refusable = request.routeOptions.config.dailyAllowance !== false;
    // An operator's key has no project: its rate is limited, and no project's allowance is taken.
    const admitted = limits.admit(principal.keyId, principal.project?.id ?? null, refusable);
    if (admitted === undefined) return done();
    if (admitted instanceof PlatformError) return done(admitted);
    admitted.then(() => done(), done);
  });
}
