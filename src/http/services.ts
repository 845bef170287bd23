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
  }
}

export function registerServices(app: FastifyInstance, db: Db, servicesOf: (work: Work) => Services) {
  const made = new WeakMap<FastifyRequest, Services>();
  app.decorateRequest('services', {
    getter(this: FastifyRequest) {
      let services = made.get(this);
      if (!services) {
        services = servicesOf(workOf(this, db));
        made.set(this, services);
      }
      return services;
    },
  });
}

function workOf(request: FastifyRequest, db: Db): Work {
  if (!request.tx || !request.txHooks) return readOnly(db);
  const actor = { type: 'key' as const, keyId: principalOf(request).keyId };
  const audit = auditInto({ actor, requestId: request.id }, request.txHooks);
  return { db: request.tx, hooks: request.txHooks, audit };
}
