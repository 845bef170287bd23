// The key cache: a key's check is believed for at most 5 seconds (so a revocation reaches every process
// within 5 s), refreshed ahead while the key is in use (refresh-ahead.ts), and concurrent checks of one
// key share one lookup. During a database outage a key verified in the last 10 minutes still passes, and
// a key that cannot be checked is SERVICE_UNAVAILABLE, never invalid: an outage must not look like a bad key.
import { isUnavailable } from '../db/database.ts';
import { PlatformError } from '../lib/errors.ts';
import { RefreshAhead } from '../lib/refresh-ahead.ts';
import type { KeyCheck } from './service.ts';

export const KEY_CACHE_TTL_MS = 5000;
const OUTAGE_GRACE_MS = 10 * 60_000;
const MAX_ENTRIES = 10_000;

/**
 * `fresh` answers from memory without a promise (the hot path); `check` looks the key up when it is not
 * fresh. Entries are keyed by the key itself: they live only in this process's memory, which holds the
 * request's header anyway, and hashing every request's key cost more than the lookup. Least recently used
 * goes first when full, so a busy key is never evicted before an idle one; entries outlive their 5 s for
 * the outage grace.
 */
export function keyCache(
  lookupMany: (keys: string[]) => Promise<Map<string, KeyCheck>>,
  now: () => number = Date.now,
) {
  const checks = new RefreshAhead<string, KeyCheck>({
    max: MAX_ENTRIES,
    ttlMs: KEY_CACHE_TTL_MS,
    loadMany: lookupMany,
    now,
  });

  return {
    fresh: (key: string): KeyCheck | undefined => checks.fresh(key),

    async check(key: string): Promise<KeyCheck> {
      try {
        return await checks.get(key);
      } catch (error) {
        if (!isUnavailable(error)) throw error;
        const last = checks.last(key);
        if (last?.value.kind === 'valid' && now() - last.at < OUTAGE_GRACE_MS) return last.value;
        throw new PlatformError('SERVICE_UNAVAILABLE', 'the database is unreachable; try again shortly');
      }
    },

    /** A capability left: its keys are refused from now on, not a cache's life later (every capability's: any). */
    forgetCapability: (name?: string) =>
      checks.forgetWhere(
        (check) =>
          check.kind === 'valid' &&
          check.principal.capability !== null &&
          (name === undefined || check.principal.capability === name),
      ),

    /** Keeps the keys in use fresh, in one lookup a second (refresh-ahead.ts). */
    refresh: () => checks.refresh(),
    start: () => checks.start(),
    stop: () => checks.stop(),
  };
}

export type KeyCache = ReturnType<typeof keyCache>;
