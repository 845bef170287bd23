// The queue's figures that health reports, read from the deliveries and the workers' heartbeats: its
// state, cheap at any size (two probes of indexes), and its counts, which read every row they count.
import { type Db, onlyRow } from '../db/database.ts';

export interface QueueState {
  /** True while deliveries are pending or in flight. */
  busy: boolean;
  /** True when deliveries are due (in the queue, not held) and no worker has reported in for 60 s. */
  workerStale: boolean;
}

export interface QueueCounts {
  dead: number;
  failedAttempts24h: number;
  dead24h: number;
}

export async function queueState(db: Db): Promise<QueueState> {
  return onlyRow(
    await db.query<QueueState>(
      `select exists (select 1 from deliveries where state = 'pending') as busy,
              (exists (select 1 from deliveries where state = 'pending' and held is null and next_attempt_at <= now())
               and not exists (select 1 from worker_heartbeats where seen_at > now() - interval '60 seconds'))
                as "workerStale"`,
    ),
  );
}

export async function queueCounts(db: Db): Promise<QueueCounts> {
  return onlyRow(
    await db.query<QueueCounts>(
      `select
         (select count(*) from deliveries where state = 'dead')::int as dead,
         (select count(*) from delivery_attempts
           where not succeeded and started_at > now() - interval '24 hours')::int as "failedAttempts24h",
         (select count(*) from deliveries
           where state = 'dead' and dead_at > now() - interval '24 hours')::int as "dead24h"`,
    ),
  );
}
