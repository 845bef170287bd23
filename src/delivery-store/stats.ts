// The queue's figures that health reports, read from the queue, the history and the workers' heartbeats: its
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
      `select exists (select 1 from delivery_queue) as busy,
              (exists (select 1 from delivery_queue where held is null and next_attempt_at <= now())
               and not exists (select 1 from worker_heartbeats where seen_at > now() - interval '60 seconds'))
                as "workerStale"`,
    ),
  );
}

export async function queueCounts(db: Db): Promise<QueueCounts> {
  return onlyRow(
    await db.query<QueueCounts>(
      `select
         (select count(*) from deliveries where dead_at is not null)::int as dead,
         (select count(*) from delivery_attempts
           where not succeeded and started_at > now() - interval '24 hours')::int as "failedAttempts24h",
         (select count(*) from deliveries where dead_at > now() - interval '24 hours')::int as "dead24h"`,
    ),
  );
}

/** The queue as an operator watches it: what waits and why, what is in flight, and who works it. */
export interface QueueFigures {
  /** pending deliveries by what they wait for */
  deliveries: { due: number; in_flight: number; scheduled: number; paused: number; ordered: number };
  /** seconds the oldest due delivery has been waiting for a worker (0 when none is due) */
  oldestDueAgeSeconds: number;
  /** worker processes that reported in within 60 s */
  workers: number;
}

/**
 * One statement over the queue (its cost grows with the backlog, not with the history) and the workers'
 * heartbeats.
 */
export async function queueFigures(db: Db): Promise<QueueFigures> {
  const row = onlyRow(
    await db.query<QueueFigures['deliveries'] & { oldest: number; workers: number }>(
      `with pending as (
         select held, next_attempt_at, lease_until >= now() as leased from delivery_queue
       )
       select count(*) filter (where held is null and next_attempt_at <= now() and not coalesce(leased, false))::int as due,
              count(*) filter (where leased)::int as in_flight,
              count(*) filter (where held is null and next_attempt_at > now() and not coalesce(leased, false))::int as scheduled,
              count(*) filter (where held = 'paused')::int as paused,
              count(*) filter (where held = 'ordered')::int as ordered,
              coalesce(extract(epoch from now() - min(next_attempt_at)
                         filter (where held is null and next_attempt_at <= now() and not coalesce(leased, false))), 0)::float8 as oldest,
              (select count(*) from worker_heartbeats where seen_at > now() - interval '60 seconds')::int as workers
         from pending`,
    ),
  );
  const { oldest, workers, ...deliveries } = row;
  return { deliveries, oldestDueAgeSeconds: oldest, workers };
}
