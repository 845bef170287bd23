// growth: does the service stay as fast when its history is large? Two services run side by side on two
// databases of the same PostgreSQL: the baseline's history stays empty, the subject's grows to 1 M and then
// 10 M deliveries (30 M attempts), spread over the 30 days of retention. At each size, rounds alternate
// between the two: the p50 and p99 of an endpoint's history page (the first, and one 15 days deep by
// cursor), an event read by id, the project's event log (its first page, and filtered by a type none
// has), a publish and health, each sent one at a time; and the delivery rate of a burst of 3,000.
// Targets: each ratio subject/baseline ≤ 1.5 (≥ 0.67 for the rate) at 10 M.
// Then the costs of history itself: dropping a day of 1 M deliveries (retention) against a DELETE of the
// same rows, the bytes per row, and the migration that partitioned an existing history of 1 M deliveries.

import pg from 'pg';
import { createDatabase } from '../support/database.ts';
import { HISTORY_OF_QUEUED } from './delivery.ts';
import { migrationFigure, retentionFigures } from './growth-costs.ts';
import { DATA, fillHistory, sizing } from './history-fill.ts';
import {
  alternate,
  type BenchResult,
  type Check,
  type Figure,
  platformEnv,
  ROOT,
  runLoad,
  spawnNode,
  spread,
  startPlatform,
} from './lib.ts';
import { migrated, seedTenants } from './seed.ts';

// BENCH_GROWTH_MAX (default 10 M) scales the whole benchmark down for a quick try: sizes 0, a tenth, all.
const MAX = Number(process.env.BENCH_GROWTH_MAX ?? 10_000_000);
const SIZES = [0, MAX / 10, MAX];
const ROUNDS = 3;
const PROBES_PER_ROUND = 200;
const BURST_EVENTS = 1000; // × 3 endpoints
const DAY_MS = 86_400_000;
const TARGET = 1.5;

type Latencies = Record<string, { p50: number; p99: number; errors: number; total: number }>;
interface Round {
  latencies: Latencies;
  rate: number;
}

export async function growth(databaseUrl: string): Promise<BenchResult> {
  const empty = await createDatabase(databaseUrl, 'empty');
  const receiverProcess = spawnNode(`${ROOT}bench/load/receiver.ts`, []);
  const receiver = await receiverProcess.waitFor(/listening on (\S+)/);
  const baseline = await side(empty.url, receiver, 'b');
  const subject = await side(databaseUrl, receiver, 's');
  const figures: Figure[] = [];
  const checks: Check[] = [];
  let failed = 0;
  let total = 0;
  try {
    let filled = 0;
    for (const size of SIZES) {
      if (size > filled) {
        const started = performance.now();
        await subject.fill(size - filled);
        filled = size;
        console.log(`filled to ${size} deliveries in ${((performance.now() - started) / 1000).toFixed(0)} s`);
      }
      const rounds = await alternate(ROUNDS, baseline.round, subject.round);
      figures.push(...sizeFigures(size, rounds));
      for (const r of rounds)
        for (const which of [r.baseline, r.subject])
          for (const probe of Object.values(which.latencies)) {
            failed += probe.errors;
            total += probe.total;
          }
    }
    const tables = await sizing(subject.client);
    figures.push({
      name: `bytes per row on disk (partitions, indexes and TOAST) at ${MAX / 1e6} M deliveries`,
      subject: Object.fromEntries(tables.map((t) => [t.name, t.perRow])),
      notes: tables
        .map((t) => `${t.name}: ${t.count} rows, ${(t.bytes / 2 ** 30).toFixed(2)} GiB`)
        .join('; '),
    });
  } finally {
    await baseline.close();
    await subject.close();
    await receiverProcess.stop();
    await empty.drop();
  }
  figures.push(...(await retentionFigures(databaseUrl, subject.projectId, subject.endpointIds, MAX / 10)));
  figures.push(await migrationFigure(databaseUrl, MAX / 10));
  checks.push({ name: 'every probe answered 2xx', ok: failed === 0, detail: `${failed} of ${total} failed` });
  return { name: 'growth', figures, checks, errors: { failed, total } };
}

/** The figures of one size: each probe's p50 and p99, and the burst's rate, subject against baseline. */
function sizeFigures(size: number, rounds: { baseline: Round; subject: Round }[]): Figure[] {
  const label = size === 0 ? 'empty (control)' : `${size / 1e6} M deliveries`;
  const probes = Object.keys(rounds[0]?.subject.latencies ?? {});
  const figures: Figure[] = probes.map((probe) => {
    const of = (r: Round) => r.latencies[probe] ?? { p50: 0, p99: 0 };
    const p50 = spread(rounds.map((r) => of(r.subject).p50 / of(r.baseline).p50));
    const p99 = spread(rounds.map((r) => of(r.subject).p99 / of(r.baseline).p99));
    const ms = (values: number[]) => Number(spread(values).median.toFixed(2));
    return {
      name: `${label}: ${probe}, p50 (p99) latency vs empty`,
      ratio: p50,
      target: `≤ ${TARGET}`,
      met: size === 0 ? undefined : p50.median <= TARGET && p99.median <= TARGET,
      subject: {
        p50: ms(rounds.map((r) => of(r.subject).p50)),
        p99: ms(rounds.map((r) => of(r.subject).p99)),
      },
      baseline: {
        p50: ms(rounds.map((r) => of(r.baseline).p50)),
        p99: ms(rounds.map((r) => of(r.baseline).p99)),
      },
      notes: `p99 ratio ${p99.median.toFixed(2)} (${p99.min.toFixed(2)}–${p99.max.toFixed(2)}); ms`,
    };
  });
  const rate = spread(rounds.map((r) => r.subject.rate / r.baseline.rate));
  figures.push({
    name: `${label}: delivery rate of a burst of ${BURST_EVENTS * 3} vs empty`,
    ratio: rate,
    target: `≥ ${(1 / TARGET).toFixed(2)}`,
    met: size === 0 ? undefined : rate.median >= 1 / TARGET,
    subject: { rate: Math.round(spread(rounds.map((r) => r.subject.rate)).median) },
    baseline: { rate: Math.round(spread(rounds.map((r) => r.baseline.rate)).median) },
  });
  return figures;
}

/**
 * One service (`start`: API, worker and maintenance) on its database, with a project, three endpoints on
 * the receiver and 100 events published through the API.
 */
async function side(url: string, receiver: string, label: string) {
  await migrated(url);
  const [tenant] = await seedTenants(url, 1, `g${label}`);
  if (!tenant) throw new Error('no tenant');
  const projectId = tenant.projectId;
  const service = await startPlatform('start', platformEnv(url, { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1' }));
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(service.baseUrl + path, {
      method,
      headers: {
        'x-api-key': tenant.key,
        ...(body ? { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status}`);
    return response.json() as Promise<Record<string, unknown>>;
  };
  const endpointIds: string[] = [];
  for (let i = 0; i < 3; i++) {
    const body = { url: `${receiver}/ok/${label}-${i}`, eventTypes: ['pay.payment.succeeded'] };
    endpointIds.push((await call('POST', '/core/v1/webhook-endpoints', body)).id as string);
  }
  const published: string[] = [];
  for (let i = 0; i < 100; i++)
    published.push(
      (await call('POST', '/core/v1/events', { type: 'pay.payment.succeeded', data: JSON.parse(DATA) }))
        .eventId as string,
    );
  const client = new pg.Client(url);
  await client.connect();
  let eventIds = published;
  const cursorAt = (at: string, id: string) => Buffer.from(JSON.stringify([at, id])).toString('base64url');
  // Until history fills, a cursor 15 days back (the empty baseline's deep page: nothing older, as asked).
  let deepCursor = cursorAt(
    new Date(Date.now() - 15 * DAY_MS).toISOString(),
    'ffffffff-ffff-7fff-bfff-ffffffffffff',
  );
  const endpoint = endpointIds[0] as string;

  return {
    client,
    projectId: tenant.projectId,
    endpointIds,

    /** More history, spread over the 30 days of retention; then as autovacuum would leave it. */
    async fill(deliveries: number) {
      const now = Date.now();
      await fillHistory(
        client,
        tenant.projectId,
        endpointIds,
        deliveries,
        new Date(now - 29.5 * DAY_MS),
        new Date(now - 60_000),
      );
      await client.query('vacuum analyze events, event_subjects, deliveries, delivery_attempts');
      const sample = await client.query<{ id: string }>(
        `select id from events tablesample system (1) where project_id = $1 limit 500`,
        [tenant.projectId],
      );
      eventIds = sample.rows.map((r) => r.id);
      const deep = await client.query<{ at: string; id: string }>(
        `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at, id from deliveries
          where project_id = $1 and endpoint_id = $2 and created_at < now() - interval '15 days'
          order by created_at desc, id desc limit 1`,
        [tenant.projectId, endpoint],
      );
      const row = deep.rows[0];
      if (row) deepCursor = cursorAt(row.at, row.id);
    },

    async round(): Promise<Round> {
      const history = `/core/v1/webhook-endpoints/${endpoint}/deliveries?limit=20`;
      const latencies = await runLoad<Latencies>('probe.ts', {
        baseUrl: service.baseUrl,
        key: tenant.key,
        count: PROBES_PER_ROUND,
        probes: [
          { name: 'history page', paths: [history] },
          {
            name: 'history page 15 days deep',
            paths: [`${history}&cursor=${deepCursor}`],
          },
          { name: 'event read', paths: eventIds.map((id) => `/core/v1/events/${id}`) },
          { name: 'event log page', paths: ['/core/v1/events?limit=20'] },
          // A type no event has: the filter reads its bounded 2,000 events, whatever the history's size.
          { name: 'event log, a type none has', paths: ['/core/v1/events?limit=20&type=shop.rare.thing'] },
          {
            name: 'publish',
            method: 'POST',
            paths: ['/core/v1/events'],
            body: JSON.stringify({ type: 'pay.payment.succeeded', data: JSON.parse(DATA) }),
          },
          { name: 'health', paths: ['/api/health'] },
        ],
      });
      return { latencies, rate: await burst() };
    },

    async close() {
      await client.end();
      await service.stop();
    },
  };

  /** 3,000 deliveries made due at once; their rate from the notification to the last one recorded. */
  async function burst(): Promise<number> {
    await settled();
    const before = await arrived();
    const now = new Date();
    await client.query(
      `with e as (
         insert into events (project_id, id, type, data, created_at)
         select $1, uuid_v7_at($4), 'pay.payment.succeeded', $3::jsonb, $4 from generate_series(1, $2)
         returning id, created_at
       ), q as (
         insert into delivery_queue (delivery_id, project_id, event_id, event_created_at, endpoint_id)
         select uuid_v7_at(e.created_at), $1, e.id, e.created_at, w from e cross join unnest($5::uuid[]) w
         returning *
       )
       ${HISTORY_OF_QUEUED}`,
      [projectId, BURST_EVENTS, DATA, now, endpointIds],
    );
    const started = performance.now();
    await client.query('notify platform_deliveries');
    while ((await arrived()) - before < BURST_EVENTS * 3) await sleep(20);
    await settled();
    return (BURST_EVENTS * 3) / ((performance.now() - started) / 1000);
  }

  async function arrived(): Promise<number> {
    const counts = (await (await fetch(`${receiver}/counts`)).json()) as Record<string, number>;
    return Object.entries(counts)
      .filter(([path]) => path.startsWith(`/ok/${label}-`))
      .reduce((sum, [, n]) => sum + n, 0);
  }

  /**
   * Waits until nothing of this project is pending (every attempt recorded): until its queue is empty,
   * which costs the same at any size of history (no index of the history names its state, so counting
   * its pending rows there read the whole history, inside the burst's time).
   */
  async function settled() {
    for (;;) {
      const { rows } = await client.query<{ n: number }>(
        'select count(*)::int as n from delivery_queue where project_id = $1',
        [projectId],
      );
      if ((rows[0]?.n ?? 0) === 0) return;
      await sleep(20);
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
