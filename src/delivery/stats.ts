// The queue's figures that health reports, read from the deliveries and the workers' heartbeats.
import { type Db, onlyRow } from '../db/database.ts';

export interface QueueStats {
  /** Deliveries pending or in flight. */
  pending: number;
  dead: number;
  failedAttempts24h: number;
  dead24h: number;
  /** True when deliveries are due and no worker has reported in for 60 s. */
  workerStale: boolean;
}

export async function queueStats(db: Db): Promise<QueueStats> {
  return onlyRow(
    await db.query<QueueStats>(
      `select
         (select count(*) from deliveries where state = 'pending')::int as pending,
         (select count(*) from deliveries where state = 'dead')::int as dead,
         (select count(*) from delivery_attempts
           where not succeeded and started_at > now() - interval '24 hours')::int as "failedAttempts24h",
         (select count(*) from deliveries
           where state = 'dead' and dead_at > now() - interval '24 hours')::int as "dead24h",
         (exists (select 1 from deliveries where state = 'pending' and next_attempt_at <= now())
          and not exists (select 1 from worker_heartbeats where seen_at > now() - interval '60 seconds'))
           as "workerStale"`,
    ),
  );
}
