// Each request's services (services.ts), made when a handler first asks: bound to the request's
// transaction on an idempotent route (its changes audited as the request's key, with its request id),
// to the pool otherwise.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { auditInto } from '../audit/store.ts';
import { readOnly, type Work } from '../audit/work.ts';
import type { Db } from '../db/database.ts';
import type { Services } from '../services.ts';
import { principalOf } from './auth.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** the request's services, bound to its unit of work */
    readonly services: Services;
    /** the request's services once made: where the `services` getter keeps them */
    madeServices: Services | null;
  }
}

export function registerServices(app: FastifyInstance, db: Db, servicesOf: (work: Work) => Services) {
  // Kept on the request itself: a WeakMap keyed by requests made the garbage collector keep each
  // request's services through its young-generation collections (docs/decisions/measured-choices.md).
  app.decorateRequest('madeServices', null);
  app.decorateRequest('services', {
    getter(this: FastifyRequest) {
      this.madeServices ??= servicesOf(workOf(this, db));
      return this.madeServices;
    },
  });
}

function workOf(request: FastifyRequest, db: Db): Work {
  if (!request.tx || !request.txHooks) return readOnly(db);
  const actor = { type: 'key' as const, keyId: principalOf(request).keyId };
  const audit = auditInto({ actor, requestId: request.id }, request.txHooks);
  return { db: request.tx, hooks: request.txHooks, audit };
}
