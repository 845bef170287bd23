// The costs of history itself, for the growth benchmark: retention (dropping a day of 1 M deliveries
// against a DELETE of the same rows, in time, PostgreSQL's CPU and WAL written) and the migration that
// partitioned an existing history (0011) on 1 M deliveries.
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { historyRetention } from '../src/delivery-store/retention.ts';
import { createDatabase } from '../support/database.ts';
import { fillHistory, fillLegacyHistory } from './history-fill.ts';
import type { Figure } from './lib.ts';

const DAY_MS = 86_400_000;
const TICK_MS = 10; // /proc counts CPU time in clock ticks of 10 ms

/** CPU time of every PostgreSQL process on this machine (ms), from /proc. */
function postgresCpuMs(): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks * TICK_MS;
}

/** Runs work and measures its wall time, PostgreSQL's CPU and the WAL it wrote. */
async function cost(client: pg.Client, work: () => Promise<unknown>) {
  const lsn = async () =>
    (await client.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]?.lsn;
  const walBefore = await lsn();
  const cpuBefore = postgresCpuMs();
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  const cpuMs = postgresCpuMs() - cpuBefore;
  const wal = await client.query<{ bytes: string }>(
    'select pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::bigint as bytes',
    [walBefore],
  );
  return {
    ms: Math.round(ms),
    cpuMs,
    walMiB: Number((Number(wal.rows[0]?.bytes ?? 0) / 2 ** 20).toFixed(1)),
  };
}

export async function retentionFigures(
  url: string,
  projectId: string,
  endpointIds: string[],
  dayDeliveries: number,
): Promise<Figure[]> {
  const db = openDatabase(url, { max: 2 });
  const client = new pg.Client(url);
  await client.connect();
  try {
    const dayStart = (offset: number) => new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS + offset * DAY_MS);
    const iso = (date: Date) => date.toISOString().slice(0, 10);
    const history = historyRetention(db);
    for (const offset of [-46, -45]) {
      await history.makeDay(iso(dayStart(offset)));
      await fillHistory(
        client,
        projectId,
        endpointIds,
        dayDeliveries,
        dayStart(offset),
        new Date(dayStart(offset + 1).getTime() - 1),
      );
    }
    await client.query('vacuum analyze events, event_subjects, deliveries, delivery_attempts');
    // The drop first, so that the autovacuum a DELETE sets off is not counted against it.
    await client.query('checkpoint');
    let dropped: string[] = [];
    const drop = await cost(client, async () => {
      dropped = await history.dropBefore(iso(dayStart(-45)));
    });
    await client.query('checkpoint');
    const [low, high] = [dayStart(-45), dayStart(-44)];
    const deleted = await cost(client, async () => {
      await client.query('begin');
      for (const [table, key] of [
        ['delivery_attempts', 'event_created_at'],
        ['deliveries', 'event_created_at'],
        ['event_subjects', 'event_created_at'],
        ['events', 'created_at'],
      ])
        await client.query(`delete from ${table} where ${key} >= $1 and ${key} < $2`, [low, high]);
      await client.query('commit');
    });
    // What a DELETE leaves to do: a vacuum reclaims its dead rows (and their index entries).
    const suffix = iso(low).replace(/-/g, '');
    const vacuumed = await cost(client, () =>
      client.query(
        `vacuum delivery_attempts_${suffix}, deliveries_${suffix}, event_subjects_${suffix}, events_${suffix}`,
      ),
    );
    const cpu = (deleted.cpuMs + vacuumed.cpuMs) / Math.max(drop.cpuMs, TICK_MS);
    const wal = (deleted.walMiB + vacuumed.walMiB) / Math.max(drop.walMiB, 0.1);
    const time = deleted.ms / Math.max(drop.ms, 1);
    return [
      {
        name: `retention: dropping a day of ${dayDeliveries / 1e6} M deliveries (its events and three attempts each) vs a DELETE of the same rows and the vacuum it needs`,
        ratio: { median: cpu, min: cpu, max: cpu },
        target: '≥ 100 (PostgreSQL CPU and WAL)',
        met: cpu >= 100 && wal >= 100,
        subject: { ms: drop.ms, cpuMs: drop.cpuMs, walMiB: drop.walMiB },
        baseline: {
          ms: deleted.ms,
          cpuMs: deleted.cpuMs,
          walMiB: deleted.walMiB,
          vacuumMs: vacuumed.ms,
          vacuumCpuMs: vacuumed.cpuMs,
          vacuumWalMiB: vacuumed.walMiB,
        },
        notes: `ratio of PostgreSQL CPU (every PostgreSQL process, /proc; the drop's counted as at least one 10 ms tick); of WAL ${wal.toFixed(0)}×; of wall time ${time.toFixed(1)}× for the DELETE alone, ${((deleted.ms + vacuumed.ms) / Math.max(drop.ms, 1)).toFixed(1)}× with its vacuum (the drop's time is mostly the file system freeing the day's files); days dropped: ${dropped.join(', ')}`,
      },
    ];
  } finally {
    await client.end();
    await db.close();
  }
}

/** The migration that partitions history (0011), on a database holding `deliveries` in the old tables. */
export async function migrationFigure(serverUrl: string, deliveries: number): Promise<Figure> {
  const { url, drop } = await createDatabase(serverUrl, 'migration');
  const db = openDatabase(url, { max: 2 });
  const client = new pg.Client(url);
  await client.connect();
  try {
    await migrate(db, '0010_management');
    const { rows } = await client.query<{ id: string }>(
      `insert into projects (slug, name, mode) values ('legacy', 'Legacy', 'test') returning id`,
    );
    await fillLegacyHistory(client, rows[0]?.id as string, deliveries, 30);
    await client.query('vacuum analyze');
    const started = performance.now();
    await migrate(db);
    const seconds = (performance.now() - started) / 1000;
    const counts = await client.query<{ deliveries: number; attempts: number; defaulted: number }>(
      `select (select count(*) from deliveries)::int as deliveries, (select count(*) from delivery_attempts)::int as attempts,
              (select count(*) from events_default)::int as defaulted`,
    );
    return {
      name: `migration 0011 on an existing history of ${deliveries / 1e6} M deliveries (a third as many events, one attempt each, over 30 days)`,
      subject: { seconds: Number(seconds.toFixed(1)), ...counts.rows[0] },
      notes: 'forward-only, in one transaction under the migration lock, as every migration',
    };
  } finally {
    await client.end();
    await db.close();
    await drop();
  }
}
