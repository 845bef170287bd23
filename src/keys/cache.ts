// The key cache: a key's check is kept for at most 5 seconds (so a revocation reaches every process within
// 5 s), and concurrent checks of one key share one lookup. During a database outage a key verified in the
// last 10 minutes still passes, and a key that cannot be checked is SERVICE_UNAVAILABLE, never invalid:
// an outage must not look like a bad key.
import { LRUCache } from 'lru-cache';
import { isUnavailable } from '../db/database.ts';
import { PlatformError } from '../errors.ts';
import type { KeyCheck } from './service.ts';

export const KEY_CACHE_TTL_MS = 5000;
const OUTAGE_GRACE_MS = 10 * 60_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  check: KeyCheck;
  at: number;
}

/**
 * `fresh` answers from memory without a promise (the hot path); `check` looks the key up when it is not
 * fresh. Entries are keyed by the key itself: they live only in this process's memory, which holds the
 * request's header anyway, and hashing every request's key cost more than the lookup. Least recently used
 * goes first when full, so a busy key is never evicted before an idle one; entries outlive their 5 s for
 * the outage grace, so expiry is by their own time, not the cache's.
 */
export function keyCache(lookup: (key: string) => Promise<KeyCheck>, now: () => number = Date.now) {
  const entries = new LRUCache<string, Entry>({ max: MAX_ENTRIES });
  const inFlight = new Map<string, Promise<KeyCheck>>();

  async function refresh(key: string): Promise<KeyCheck> {
    const check = await lookup(key);
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
