// Authentication and scope, as one onRequest hook. Key checks are cached for at most 5 seconds (so a
// revocation reaches every process within 5 s); concurrent checks of one key share one lookup.
// During a database outage a key verified in the last 10 minutes still passes, and a key that cannot be
// checked gets 503, never 401: an outage must not look like a bad key.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isUnavailable } from '../db/database.ts';
import type { Scope } from '../keys/scopes.ts';
import type { KeyCheck, Principal } from '../keys/service.ts';
import { PlatformError } from './errors.ts';

export const KEY_CACHE_TTL_MS = 5000;
const OUTAGE_GRACE_MS = 10 * 60_000;
const MAX_ENTRIES = 10_000;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route: anyone, any valid key, or a key holding this scope. Default: any valid key. */
    access?: 'public' | 'key' | Scope;
    /** Answer an outage with this instead of SERVICE_UNAVAILABLE (health answers with its own body). */
    onOutage?: (request: FastifyRequest) => Promise<{ statusCode: number; body: unknown }>;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

interface Entry {
  check: KeyCheck;
  at: number;
}

/**
 * The key cache. `fresh` answers from memory without a promise (the hot path); `check` looks the key up
 * when it is not fresh. Entries are keyed by the key itself: they live only in this process's memory,
 * which holds the request's header anyway, and hashing every request's key cost more than the lookup.
 */
export function keyCache(lookup: (key: string) => Promise<KeyCheck>, now: () => number = Date.now) {
  const entries = new Map<string, Entry>();
  const inFlight = new Map<string, Promise<KeyCheck>>();

  async function refresh(key: string): Promise<KeyCheck> {
    const check = await lookup(key);
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
    entries.delete(key); // re-insert so iteration order tracks freshness
    entries.set(key, { check, at: now() });
    return check;
  }

  return {
    fresh(key: string): KeyCheck | undefined {
      const cached = entries.get(key);
      return cached && now() - cached.at < KEY_CACHE_TTL_MS ? cached.check : undefined;
    },

    async check(key: string): Promise<KeyCheck> {
      const cached = entries.get(key);
      if (cached && now() - cached.at < KEY_CACHE_TTL_MS) return cached.check;
      let pending = inFlight.get(key);
      if (!pending) {
        pending = refresh(key).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      try {
        return await pending;
      } catch (error) {
        if (!isUnavailable(error)) throw error;
        if (cached?.check.kind === 'valid' && now() - cached.at < OUTAGE_GRACE_MS) return cached.check;
        throw new PlatformError('SERVICE_UNAVAILABLE', 'the database is unreachable; try again shortly');
      }
    },
  };
}

export type KeyCache = ReturnType<typeof keyCache>;

/** Authentication then scope, in one onRequest hook; callback-style so a cached key costs no promise. */
export function registerAuth(app: FastifyInstance, keys: KeyCache) {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', (request, reply, done) => {
    // routeOptions builds a new object on every read: read it once. Its config also carries the url.
    const config = request.routeOptions.config as typeof request.routeOptions.config & { url?: string };
    const { access = 'key', onOutage } = config;
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
    keys.check(key).then(admit, (error: unknown) => {
      if (onOutage && error instanceof PlatformError && error.code === 'SERVICE_UNAVAILABLE') {
        // Replying from a callback hook: send, and do not call done.
        onOutage(request).then(({ statusCode, body }) => reply.code(statusCode).send(body), done);
        return;
      }
      done(error as Error);
    });
  });
}

/** The authenticated principal of a route that requires a key. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal)
    throw new Error(`route ${request.routeOptions.url} reads a principal it does not require`);
  return request.principal;
}
