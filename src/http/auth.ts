// Authentication and scope, as one onRequest hook, through the key cache (keys/cache.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PlatformError } from '../errors.ts';
import type { KeyCache } from '../keys/cache.ts';
import type { Scope } from '../keys/scopes.ts';
import type { KeyCheck, Principal } from '../keys/service.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route: anyone, any valid key, or a key holding this scope. Default: any valid key. */
    access?: 'public' | 'key' | Scope;
    /** The answer to SERVICE_UNAVAILABLE, for a route that has its own (health: a Health body). */
    onOutage?: (request: FastifyRequest) => Promise<{ statusCode: number; body: unknown }>;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** Authentication then scope, in one onRequest hook; callback-style so a cached key costs no promise. */
export function registerAuth(app: FastifyInstance, keys: KeyCache) {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', (request, _reply, done) => {
    // routeOptions builds a new object on every read: read it once. Its config also carries the url.
    const config = request.routeOptions.config as typeof request.routeOptions.config & { url?: string };
    const { access = 'key' } = config;
    if (access === 'public' || config.url === undefined || config.url.startsWith('/docs')) return done();

    const key = request.headers['x-api-key'];
    if (key === undefined || key === '') return done(new PlatformError('API_KEY_MISSING'));
    if (typeof key !== 'string')
      return done(new PlatformError('API_KEY_INVALID', 'send exactly one x-api-key header'));

    const admit = (result: KeyCheck) => {
      if (result.kind === 'invalid') return done(new PlatformError('API_KEY_INVALID'));
      if (result.kind === 'revoked') return done(new PlatformError('API_KEY_REVOKED'));
      if (access !== 'key' && !result.principal.scopes.has(access)) {
        return done(
          new PlatformError('INSUFFICIENT_SCOPE', `this route needs the scope ${access}`, {
            requiredScope: access,
          }),
        );
      }
      request.principal = result.principal;
      done();
    };
    const cached = keys.fresh(key);
    if (cached) return admit(cached);
    keys.check(key).then(admit, done);
  });
}

/** The authenticated principal of a route that requires a key. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal)
    throw new Error(`route ${request.routeOptions.url} reads a principal it does not require`);
  return request.principal;
}
