// The planner's statistics of the history's partitions, kept up while a day fills. A day's partitions are
// made empty a week ahead (retention.ts), and fill within the day. A plan that PostgreSQL keeps for a
// prepared statement (a generic plan) is made once, from the statistics of that moment, and kept until
// they change. A plan made while the day was small can read the whole day (a hash join over a sequential scan),
// as the worker's record of attempts did: fine at a hundred rows, ruinous at tens of thousands.
// Autovacuum analyzes a partition only once a minute at most, and a busy day outgrows its plan sooner.
// So the workers analyze each partition that has doubled since it was last analyzed (from 1,000 rows on,
// so at most about ten times in a day of a million rows), and the new statistics make PostgreSQL plan again.
import type { Database } from '../db/database.ts';
import { LOCK_TIMEOUT } from './retention.ts';

/** One worker at a time analyzes; the others skip their turn. */
const STATISTICS_LOCK = 7310015;
/** Below this, any plan reads a partition quickly. */
const MIN_ROWS = 1000;

/** Analyzes the history partitions that have doubled since their last analysis; their names. */
export async function analyzeGrown(db: Database): Promise<string[]> {
  return db.transaction(async (tx) => {
    const { rows: lock } = await tx.query<{ mine: boolean }>('select pg_try_advisory_xact_lock($1) as mine', [
      STATISTICS_LOCK,
    ]);
    if (!lock[0]?.mine) return [];
    // An ANALYZE that would wait for a lock (autovacuum on the same partition, a day being made or dropped)
    // gives way, as the partition changes do (retention.ts); the next pass tries again.
    await tx.query(`set local lock_timeout = '${LOCK_TIMEOUT}'`);
    // reltuples is the count the last analysis saw (-1 if none); n_live_tup counts rows as they commit.
    const { rows } = await tx.query<{ name: string }>(
      `select c.oid::regclass::text as name
         from pg_inherits i
         join pg_class c on c.oid = i.inhrelid
         join pg_stat_user_tables s on s.relid = c.oid
        where i.inhparent in ('events'::regclass, 'event_subjects'::regclass, 'deliveries'::regclass,
                              'delivery_attempts'::regclass)
          and s.n_live_tup >= $1 and s.n_live_tup > 2 * greatest(c.reltuples, 0)`,
      [MIN_ROWS],
    );
    // The name is PostgreSQL's own rendering of the regclass, quoted where it must be.
    for (const { name } of rows) await tx.query(`analyze ${name}`);
    return rows.map((r) => r.name);
  });
}
