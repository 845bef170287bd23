// Authentication and scope, as one onRequest hook, through the key cache (keys/cache.ts). A project's
// key holds project scopes and an operator's key operator scopes, so a key of the wrong kind for a route
// is refused as lacking its scope (403). An expired key is refused even while its check is cached.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PlatformError } from '../errors.ts';
import type { KeyActivity } from '../keys/activity.ts';
import type { KeyCache } from '../keys/cache.ts';
import type { OperatorScope, Scope } from '../keys/scopes.ts';
import type { KeyCheck, Principal } from '../keys/service.ts';
import type { ProjectMe } from '../projects/store.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route: anyone, any valid key, or a key holding this scope. Default: any valid key. */
    access?: 'public' | 'key' | Scope | OperatorScope;
    /** The answer to SERVICE_UNAVAILABLE, for a route that has its own (health: a Health body). */
    onOutage?: (request: FastifyRequest) => Promise<{ statusCode: number; body: unknown }>;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** Authentication then scope, in one onRequest hook; callback-style so a cached key costs no promise. */
export function registerAuth(app: FastifyInstance, keys: KeyCache, activity: KeyActivity) {
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
      if (result.kind !== 'valid') return done(refusal(result.kind));
      const { principal } = result;
      if (principal.expiresAt !== null && principal.expiresAt <= Date.now()) return done(refusal('expired'));
      if (access !== 'key' && !principal.scopes.has(access)) {
        return done(
          new PlatformError('INSUFFICIENT_SCOPE', `this route needs the scope ${access}`, {
            requiredScope: access,
          }),
        );
      }
      request.principal = principal;
      activity.touch(principal.keyId);
      done();
    };
    const cached = keys.fresh(key);
    if (cached) return admit(cached);
    keys.check(key).then(admit, done);
  });
}

function refusal(kind: 'invalid' | 'revoked' | 'expired'): PlatformError {
  if (kind === 'revoked') return new PlatformError('API_KEY_REVOKED');
  if (kind === 'expired') return new PlatformError('API_KEY_EXPIRED');
  return new PlatformError('API_KEY_INVALID');
}

/** The authenticated principal of a route that requires a key. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal)
    throw new Error(`route ${request.routeOptions.url} reads a principal it does not require`);
  return request.principal;
}

/** The project of a route that requires a project scope (which operator keys never hold). */
export function projectOf(request: FastifyRequest): ProjectMe {
  const { project } = principalOf(request);
  if (!project) throw new Error(`route ${request.routeOptions.url} needs a project's key`);
  return project;
}
