// After a commit that queued deliveries, the delivery workers are told to look: one in this process by an
// in-process signal, every other by a NOTIFY on the deliveries channel, sent after the commit rather than
// in the writing statement. PostgreSQL holds a global lock on its notification queue from a notifying
// transaction's commit until the commit is flushed, so a NOTIFY in every publish made every publish's
// commit wait its turn (docs/decisions/waking-workers.md).
//
// Sent after the commit, on a connection of their own (never queued behind the pool's requests), they are
// coalesced: at most one is in flight, and a commit that ends while one is in flight gets one more once
// it is answered. So after every commit a NOTIFY starts, and the worker that hears it sees the commit.
// One that fails (the connection broke, the database is away) is sent once more a second later; until
// then, and if that fails too, each worker's backstop poll (PLATFORM_WORKER_POLL_MS) finds what was
// queued: a lost NOTIFY costs time, never a delivery.
import type { EventEmitter } from 'node:events';
import type { Database } from '../db/database.ts';
import { DELIVERIES_CHANNEL } from './channel.ts';

export type WakeWorkers = () => void;

const RETRY_MS = 1000;

export function workerWaker(db: Database, signals: EventEmitter<{ deliveries: [] }>): WakeWorkers {
  let sending = false;
  let again = false;
  const send = (retry = true) => {
    sending = true;
    again = false;
    db.notify(DELIVERIES_CHANNEL, '').then(
      () => {
        sending = false;
        if (again) send();
      },
      () => {
        // Once more in a second, on a new connection; still "sending", so the commits meanwhile wait for
        // it. A second failure leaves it to the poll and to the next commit's NOTIFY.
        if (retry) setTimeout(() => send(false), RETRY_MS).unref();
        else sending = false;
      },
    );
  };
  return () => {
    signals.emit('deliveries');
    if (sending) again = true;
    else send();
  };
}
