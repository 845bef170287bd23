// After a commit that queued deliveries, the delivery workers are told to look: one in this process by an
// in-process signal, every other by a NOTIFY on the deliveries channel, sent after the commit rather than
// in the writing statement. PostgreSQL holds a global lock on its notification queue from a notifying
// transaction's commit until the commit is flushed, so a NOTIFY in every publish made every publish's
// commit wait its turn: publishes went at 0.6 of the same statement without it (README, Decisions,
// "Waking the workers").
//
// Sent after the commit, they are coalesced: at most one is in flight, and a commit that ends while one
// is in flight gets one more once it is answered. So after every commit a NOTIFY starts, and the worker
// that hears it sees the commit. One that fails (the database is away) costs only time: each worker's
// backstop poll (PLATFORM_WORKER_POLL_MS) finds what was queued.
import type { EventEmitter } from 'node:events';
import type { Database } from '../db/database.ts';
import { DELIVERIES_CHANNEL } from './channel.ts';

export type WakeWorkers = () => void;

export function workerWaker(db: Database, signals: EventEmitter<{ deliveries: [] }>): WakeWorkers {
  let sending = false;
  let again = false;
  const send = () => {
    sending = true;
    again = false;
    db.query(`select pg_notify('${DELIVERIES_CHANNEL}', '')`)
      .catch(() => {}) // the backstop poll finds the deliveries
      .finally(() => {
        sending = false;
        if (again) send();
      });
  };
  return () => {
    signals.emit('deliveries');
    if (sending) again = true;
    else send();
  };
}
