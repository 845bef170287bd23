// Authentication and scope, as one onRequest hook, through the key cache (keys/cache.ts). A project's
// key holds project scopes and an operator's key operator scopes, so a key of the wrong kind for a route
// is refused as lacking its scope (403). An expired key is refused even while its check is cached.
// Without a key, a portal session's cookie authenticates the /core/v1 routes that admit sessions; its
// writes must also carry the session's x-csrf-token.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { KeyActivity } from '../keys/activity.ts';
import type { KeyCache } from '../keys/cache.ts';
import {
  CAPABILITY_SCOPE,
  isOperatorScope,
  type KeyKind,
  type OperatorScope,
  type Scope,
} from '../keys/scopes.ts';
import type { KeyCheck, Principal } from '../keys/service.ts';
import { PlatformError } from '../lib/errors.ts';
import { csrfMatches, type SessionPrincipal } from '../portal/service.ts';
import type { ProjectMe } from '../projects/store.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route: anyone, any valid key, or a key holding this scope. Default: any valid key. */
    access?: 'public' | 'key' | Scope | OperatorScope | typeof CAPABILITY_SCOPE;
    /**
     * For a route whose scope depends on the request (the gateway's: the scope of the route it matches):
     * the scope, or the error to answer before authentication (a 404 when it matches nothing).
     */
    accessOf?: (request: FastifyRequest) => string | PlatformError;
    /** false for a /core/v1 route a portal session may not call (minting sessions) */
    portal?: boolean;
    /** The answer to SERVICE_UNAVAILABLE, for a route that has its own (health: a Health body). */
    onOutage?: (request: FastifyRequest) => Promise<{ statusCode: number; body: unknown }>;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** The kind of key a route's scope belongs to. */
const kindOf = (scope: string): KeyKind =>
  scope === CAPABILITY_SCOPE ? 'capability' : isOperatorScope(scope) ? 'operator' : 'project';

const A_KEY: Record<KeyKind, string> = {
  project: "a project's key",
  operator: "an operator's key",
  capability: "a capability's key",
};

/**
 * A key that lacks the route's scope: its detail says which kind of key the route takes when the key is
 * of another kind (a scope it could never hold), else which scope it lacks.
 */
function insufficient(principal: Principal, scope: string): PlatformError {
  const wanted = kindOf(scope);
  const detail =
    principal.kind === wanted
      ? `this route needs the scope ${scope}, which this key does not hold`
      : `this route takes ${A_KEY[wanted]} (with the scope ${scope}); this is ${A_KEY[principal.kind]}`;
  return new PlatformError('INSUFFICIENT_SCOPE', detail, { requiredScope: scope });
}

/** Authentication then scope, in one onRequest hook; callback-style so a cached key costs no promise. */
export function registerAuth(
  app: FastifyInstance,
  keys: KeyCache,
  activity: KeyActivity,
  session: (token: string) => Promise<SessionPrincipal>,
) {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', (request, _reply, done) => {
    // routeOptions builds a new object on every read: read it once. Its config also carries the url.
    const config = request.routeOptions.config as typeof request.routeOptions.config & { url?: string };
    const access = config.accessOf ? config.accessOf(request) : (config.access ?? 'key');
    if (access instanceof PlatformError) return done(access);
    if (access === 'public' || config.url === undefined || config.url.startsWith('/docs')) return done();

    /** The principal, if it holds the route's scope (a key's use is noted then). */
    const admitted = (principal: Principal, byKey: boolean) => {
      if (access !== 'key' && !principal.scopes.has(access)) return done(insufficient(principal, access));
      request.principal = principal;
      if (byKey) activity.touch(principal.keyId);
      done();
    };
    const key = request.headers['x-api-key'];
    if (key === undefined || key === '') {
      const token = portalToken(request);
      if (token === undefined || config.portal === false || !config.url.startsWith('/core/v1/'))
        return done(new PlatformError('API_KEY_MISSING'));
      const write = request.method !== 'GET' && request.method !== 'HEAD';
      // Not returned: a callback-style hook that returns a promise is run twice by Fastify.
      session(token).then((principal) => {
        if (write && !csrfMatches(principal, request.headers['x-csrf-token']))
          return done(new PlatformError('CSRF_TOKEN_INVALID'));
        admitted(principal, false);
      }, done);
      return;
    }
    if (typeof key !== 'string')
      return done(new PlatformError('API_KEY_INVALID', 'send exactly one x-api-key header'));

    const admit = (result: KeyCheck) => {
      if (result.kind !== 'valid') return done(refusal(result.kind));
      const { principal } = result;
      if (principal.expiresAt !== null && principal.expiresAt <= Date.now()) return done(refusal('expired'));
      admitted(principal, true);
    };
    const cached = keys.fresh(key);
    if (cached) return admit(cached);
    keys.check(key).then(admit, done);
  });
}

const PORTAL_COOKIE = /(?:^|;\s*)platform_portal=([^;]*)/;

/** The portal session's token, from its cookie. */
export function portalToken(request: FastifyRequest): string | undefined {
  const cookie = request.headers.cookie;
  return typeof cookie === 'string' ? PORTAL_COOKIE.exec(cookie)?.[1] || undefined : undefined;
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
