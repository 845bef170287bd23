// The history's horizon (migration 0011: one partition per UTC day of events, their tags, deliveries and
// attempts). Maintenance keeps a week of partitions ahead, and at the horizon drops whole days instead of
// deleting rows:
//  - the horizon is the longest retention any project keeps (PLATFORM_RETENTION_DAYS, or a project's own
//    retentionDays when longer); a project that keeps less sees nothing past its own horizon (reads filter
//    on it) and its payloads past it are redacted, a batch at a time;
//  - a delivery still pending past the horizon is marked dead first; a day is dropped once none of its
//    deliveries is pending and none died in the last 24 hours (so health still counts them).
// Every step is idempotent and safe with several workers at once (the partition function takes a lock).

import { type Database, type Db, pgCode } from '../db/database.ts';
import { DAY_MS, utcDay } from '../lib/clock.ts';
import { redactResponses } from './state.ts';

/**
 * The oldest time a project's history holds, as SQL: its own retention, else the installation's (`days`,
 * a parameter); `project` is the parameter holding the project's id.
 */
export const projectHorizon = (project: string, days: string) =>
  `now() - make_interval(days => coalesce((select retention_days from projects where id = ${project}), ${days}::int))`;

export const DAYS_AHEAD = 7;
const REDACT_BATCH = 1000;
/** The advisory lock history_partition takes (migration 0011): one worker at a time makes or drops days. */
const PARTITIONS_LOCK = 7310011;
/**
 * Making a day (ATTACH locks the default partitions) and dropping one (DROP locks the parents) take
 * ACCESS EXCLUSIVE locks that the claim, a publish or a read may hold the other way round: a deadlock.
 * Their lock waits end sooner than PostgreSQL's deadlock_timeout (1 s by default), so the partition
 * change is always the one that gives way, never a request or the worker; it is tried again shortly.
 */
export const LOCK_TIMEOUT = '400ms';
const TRIES = 5;

/**
 * The UTC days the times fall in, as the history's partitions divide them: from the first's, to after the
 * last's. Passed to a statement as bounds on the partition key, they let PostgreSQL leave out every other
 * day's partition as the statement starts (docs/decisions/claim-fixed-cost.md). No times, no day.
 */
export function daysOf(times: Date[]): [Date, Date] {
  if (times.length === 0) return [new Date(0), new Date(0)];
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const time of times) {
    first = Math.min(first, time.getTime());
    last = Math.max(last, time.getTime());
  }
  return [new Date(first - (first % DAY_MS)), new Date(last - (last % DAY_MS) + DAY_MS)];
}

interface Partition {
  day: string;
}

/** The days that have partitions, oldest first. */
async function partitions(db: Db): Promise<Partition[]> {
  const { rows } = await db.query<Partition>(
    `select to_char(to_date(substr(c.relname, 8), 'YYYYMMDD'), 'YYYY-MM-DD') as day
       from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'events'::regclass and c.relname ~ '^events_[0-9]{8}$'
      order by c.relname`,
  );
  return rows;
}

export const historyRetention = (db: Database) => ({
  /** Makes today's partitions and a week ahead's (rows the default held for them move in); how many new. */
  async ensureAhead(now: Date): Promise<number> {
    let made = 0;
    for (let i = 0; i <= DAYS_AHEAD; i++) {
      if (await makeDay(db, utcDay(now.getTime() + i * DAY_MS))) made++;
    }
    return made;
  },

  /** Makes one day's partitions (`YYYY-MM-DD`) unless they exist; whether it made them. */
  makeDay: (day: string) => makeDay(db, day),

  partitions: () => partitions(db),

  /** The first day kept: the longest retention of the installation and its projects. */
  async horizon(now: Date, retentionDays: number): Promise<string> {
    const { rows } = await db.query<{ days: number }>(
      'select greatest($1::int, coalesce(max(retention_days), 0)) as days from projects',
      [retentionDays],
    );
    return utcDay(now.getTime() - (rows[0]?.days ?? retentionDays) * DAY_MS);
  },

  /** Marks dead the deliveries still pending before the horizon; how many. */
  async expirePending(horizon: string): Promise<number> {
    const result = await db.query(
      `with expired as (
         delete from delivery_queue where event_created_at < $1::date
         returning project_id, delivery_id, event_created_at
       )
       update deliveries d set state = 'dead', dead_at = now(),
              last_error = 'not delivered within the retention of its history'
         from expired x
        where d.project_id = x.project_id and d.id = x.delivery_id and d.event_created_at = x.event_created_at`,
      [horizon],
    );
    return result.rowCount ?? 0;
  },

  /**
   * Drops the days before the horizon whose deliveries are settled and did not die in the last 24 hours:
   * the attempts, deliveries, tags and events of each go together. The days dropped.
   */
  async dropBefore(horizon: string): Promise<string[]> {
    const dropped: string[] = [];
    for (const { day } of await partitions(db)) {
      if (day >= horizon) break;
      if (await givingWay(db, (tx) => dropDay(tx, day))) dropped.push(day);
    }
    return dropped;
  },

  /**
   * Redacts, a batch at a time, the payloads (and captured responses) of the projects that keep less than
   * the horizon, past their own horizon; how many events.
   */
  async redactShortRetention(retentionDays: number): Promise<number> {
    const { rows } = await db.query<{ redacted: number }>(
      `with short as (
         select id, now() - make_interval(days => retention_days) as horizon from projects
          where retention_days < (select greatest($1::int, coalesce(max(retention_days), 0)) from projects)
       ), batch as (
         select e.project_id, e.id, e.created_at from events e join short s on s.id = e.project_id
          where e.created_at < s.horizon and e.redacted_at is null
          limit $2
       ), events_redacted as (
         update events e set data = '{"redacted": true}', data_jsonb = null, redacted_at = now()
           from batch b where e.project_id = b.project_id and e.id = b.id and e.created_at = b.created_at
       ), ${redactResponses({ from: 'batch b', project: 'b.project_id', event: 'b.id', createdAt: 'b.created_at' })}
       select count(*)::int as redacted from batch`,
      [retentionDays, REDACT_BATCH],
    );
    return rows[0]?.redacted ?? 0;
  },
});

async function makeDay(db: Database, day: string): Promise<boolean> {
  const { rows } = await givingWay(db, (tx) =>
    tx.query<{ made: boolean }>('select history_partition($1::date) as made', [day]),
  );
  return rows[0]?.made ?? false;
}

/** Runs fn in a transaction whose lock waits give way (LOCK_TIMEOUT), up to TRIES times. */
async function givingWay<T>(db: Database, fn: (tx: Db) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(async (tx) => {
        await tx.query(`set local lock_timeout = '${LOCK_TIMEOUT}'`);
        return fn(tx);
      });
    } catch (error) {
      const code = pgCode(error);
      const gaveWay = code === '55P03' || code === '40P01'; // lock_not_available, deadlock_detected
      if (!gaveWay || attempt === TRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt + Math.random() * 200));
    }
  }
}

/**
 * Drops one day's partitions if none of its deliveries is pending or died in the last 24 hours; whether
 * it did. The parents are locked first (a DROP alone would lock the partition before its parent, the
 * reverse of every query), and the check runs under the same locks, so nothing lands in between.
 */
async function dropDay(tx: Db, day: string): Promise<boolean> {
  const { rows: locked } = await tx.query<{ ok: boolean }>('select pg_try_advisory_xact_lock($1) as ok', [
    PARTITIONS_LOCK,
  ]);
  if (!locked[0]?.ok) return false; // another worker is making or dropping days: its pass will do
  await tx.query(
    'lock table only events, event_subjects, deliveries, delivery_attempts in access exclusive mode',
  );
  const suffix = day.replace(/-/g, '');
  // Two probes: the queue (small), and the dead deliveries' index; one condition joining them read the whole day.
  const { rows } = await tx.query<{ busy: boolean }>(
    `select exists (select 1 from delivery_queue
                     where event_created_at >= $1::date::timestamp at time zone 'UTC'
                       and event_created_at < ($1::date + 1)::timestamp at time zone 'UTC')
         or exists (select 1 from deliveries_${suffix} where dead_at > now() - interval '24 hours')
         as busy`,
    [day],
  );
  if (rows[0]?.busy) return false;
  await tx.query(
    `drop table delivery_attempts_${suffix}, deliveries_${suffix}, event_subjects_${suffix}, events_${suffix}`,
  );
  return true;
}
