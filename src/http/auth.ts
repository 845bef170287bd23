// Authentication and scope, as one onRequest hook. Key checks are cached for at most 5 seconds (so a
// revocation reaches every process within 5 s); concurrent checks of one key share one lookup.
// During a database outage a key verified in the last 10 minutes still passes, and a key that cannot be
// checked gets 503, never 401: an outage must not look like a bad key.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isUnavailable } from '../db/database.ts';
import type { Scope } from '../keys/scopes.ts';
import { hashKey, type KeyCheck, type Principal } from '../keys/service.ts';
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

export function keyCache(lookup: (key: string) => Promise<KeyCheck>, now: () => number = Date.now) {
  const entries = new Map<string, Entry>();
  const inFlight = new Map<string, Promise<KeyCheck>>();

  async function refresh(key: string, id: string): Promise<KeyCheck> {
    const check = await lookup(key);
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
    entries.delete(id); // re-insert so iteration order tracks freshness
    entries.set(id, { check, at: now() });
    return check;
  }

  return async function check(key: string): Promise<KeyCheck> {
    // Cached by hash so no map holds a key in clear.
    const id = hashKey(key).toString('base64');
    const cached = entries.get(id);
    if (cached && now() - cached.at < KEY_CACHE_TTL_MS) return cached.check;
    let pending = inFlight.get(id);
    if (!pending) {
      pending = refresh(key, id).finally(() => inFlight.delete(id));
      inFlight.set(id, pending);
    }
    try {
      return await pending;
    } catch (error) {
      if (!isUnavailable(error)) throw error;
      if (cached?.check.kind === 'valid' && now() - cached.at < OUTAGE_GRACE_MS) return cached.check;
      throw new PlatformError('SERVICE_UNAVAILABLE', 'the database is unreachable; try again shortly');
    }
  };
}

export function registerAuth(app: FastifyInstance, check: (key: string) => Promise<KeyCheck>) {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    const { access = 'key', onOutage } = request.routeOptions.config;
    if (access === 'public' || request.is404 || request.routeOptions.url?.startsWith('/docs')) return;

    const key = request.headers['x-api-key'];
    if (key === undefined || key === '') throw new PlatformError('API_KEY_MISSING');
    if (typeof key !== 'string')
      throw new PlatformError('API_KEY_INVALID', 'send exactly one x-api-key header');
    let result: KeyCheck;
    try {
      result = await check(key);
    } catch (error) {
      if (onOutage && error instanceof PlatformError && error.code === 'SERVICE_UNAVAILABLE') {
        const { statusCode, body } = await onOutage(request);
        return reply.code(statusCode).send(body);
      }
      throw error;
    }
    if (result.kind === 'invalid') throw new PlatformError('API_KEY_INVALID');
    if (result.kind === 'revoked') throw new PlatformError('API_KEY_REVOKED');
    if (access !== 'key' && !result.principal.scopes.has(access)) {
      throw new PlatformError('INSUFFICIENT_SCOPE', `this route needs the scope ${access}`, {
        requiredScope: access,
      });
    }
    request.principal = result.principal;
  });
}

/** The authenticated principal of a route that requires a key. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal)
    throw new Error(`route ${request.routeOptions.url} reads a principal it does not require`);
  return request.principal;
}
