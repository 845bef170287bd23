// Housekeeping that runs in the worker processes (`start`, `worker`): forgetting idempotency records after
// 24 hours. Expired records are already ignored when a key is claimed; purging only reclaims the space.
import type { Logger } from 'pino';
import type { Clock } from './clock.ts';
import type { Database } from './db/database.ts';
import { idempotencyStore } from './idempotency/store.ts';

const EVERY_MS = 10 * 60_000;

export function startMaintenance(deps: { db: Database; clock: Clock; log: Logger }): () => void {
  const { db, clock, log } = deps;
  let busy = false; // a slow run is not overlapped by the next
  const run = async () => {
    if (busy) return;
    busy = true;
    try {
      let purged = 0;
      let batch: number;
      do {
        batch = await idempotencyStore(db).purge(clock.now());
        purged += batch;
      } while (batch > 0);
      if (purged > 0) log.info({ purged }, 'forgot idempotency records older than 24 hours');
    } catch (error) {
      log.warn({ err: error }, 'idempotency purge failed; retrying at the next run');
    } finally {
      busy = false;
    }
  };
  const first = setTimeout(run, 5_000);
  const timer = setInterval(run, EVERY_MS);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
