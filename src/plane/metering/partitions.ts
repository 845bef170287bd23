// The metering tables' partitions (migration 0018): usage records by generation of 35 days, reservations
// by day. Maintenance makes the current and next ones ahead and drops those past their window; every
// process makes them too, once a day before its first write (one running without maintenance, as `serve`
// does), so no write fails for want of one.

import type { Db } from '../../db/database.ts';
import { DAY_MS, utcDay } from '../../lib/clock.ts';

/** Days a generation of usage record ids lasts: an id is remembered at least this long. */
export const GENERATION_DAYS = 35;
/** Days a day's reservations are kept (they last at most 15 minutes; a day later they bind nothing). */
const RESERVATION_DAYS = 2;

const epochDay = (at: Date) => Math.floor(at.getTime() / DAY_MS);
export const generationOf = (at: Date) => Math.floor(epochDay(at) / GENERATION_DAYS);
const dayOf = (epoch: number) => utcDay(epoch * DAY_MS);

const recordsPartition = (generation: number) =>
  `create table if not exists usage_records_g${generation} partition of usage_records for values in (${generation})`;
const reservationsPartition = (epoch: number) =>
  `create table if not exists usage_reservations_${dayOf(epoch).replaceAll('-', '')} partition of usage_reservations
     for values from ('${dayOf(epoch)}') to ('${dayOf(epoch + 1)}')`;

/** Makes the partitions around `now`: this generation and the next, today's reservations and the next two days'. */
export async function ensurePartitions(db: Db, now: Date) {
  const generation = generationOf(now);
  for (const g of [generation - 1, generation, generation + 1]) await db.query(recordsPartition(g));
  const today = epochDay(now);
  for (const day of [today - 1, today, today + 1, today + 2]) await db.query(reservationsPartition(day));
}

/** Drops the partitions past their window: record generations before the last one, days of old reservations. */
export async function dropOldPartitions(db: Db, now: Date): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent in ('usage_records'::regclass, 'usage_reservations'::regclass)`,
  );
  const oldestGeneration = generationOf(now) - 1;
  const oldestDay = dayOf(epochDay(now) - RESERVATION_DAYS).replaceAll('-', '');
  const old = rows
    .map((row) => row.name)
    .filter((name) => {
      const generation = /^usage_records_g(\d+)$/.exec(name)?.[1];
      if (generation) return Number(generation) < oldestGeneration;
      const day = /^usage_reservations_(\d{8})$/.exec(name)?.[1];
      return day !== undefined && day < oldestDay;
    });
  for (const name of old) await db.query(`drop table if exists ${name}`);
  return old;
}

/**
 * Makes sure the partitions around now exist before a write needs them, once a day in each process (a
 * write in a request's transaction cannot make one after it failed: the failure aborts the transaction).
 */
export function partitionsReady(db: Db): (now: Date) => Promise<void> {
  let ready: { day: number; made: Promise<void> } | undefined;
  return (now) => {
    const day = epochDay(now);
    if (ready?.day !== day) {
      const made = ensurePartitions(db, now);
      ready = { day, made };
      made.catch(() => {
        if (ready?.made === made) ready = undefined; // tried again by the next write
      });
    }
    return ready.made;
  };
}
