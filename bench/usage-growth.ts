// usage-growth: does the usage change feed stay as fast when usage history is large? Two services run side
// by side on two databases of the same PostgreSQL: the baseline's usage history is empty, the subject's
// grows to 1 M and then 10 M usage records (BENCH_USAGE_GROWTH_MAX), arrived over the last 35 days for 100
// projects × 10 metrics, each day's records counted into its totals by transactions of their own as a
// capability's batches would. Then the same 1,000 fresh totals are recorded through the API on both, and
// rounds alternate between the two: a page of 1,000 from the cursor before the fresh totals (the feed's
// tail, where a billing service reads), the first page of the feed, and a poll at its end (empty), each
// sent one at a time. Target: each p50 ratio subject/baseline ≤ 1.5 at 10 M.
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { generationOf } from '../src/plane/metering/partitions.ts';
import { createDatabase } from '../support/database.ts';
import {
  alternate,
  type BenchResult,
  BIN,
  type Figure,
  platformEnv,
  runLoad,
  spread,
  startPlatform,
} from './lib.ts';
import { migrated, seedTenants, type Tenant } from './seed.ts';

const MAX = Number(process.env.BENCH_USAGE_GROWTH_MAX ?? 10_000_000);
const SIZES = [0, MAX / 10, MAX];
const ROUNDS = 3;
const PROBES_PER_ROUND = 100;
const PROJECTS = 100;
const METRICS = 10;
const DAYS = 35;
const TARGET = 1.5;
const MANIFEST = {
  description: 'The benchmark’s billing reader',
  scopes: [],
  metrics: Array.from({ length: METRICS }, (_, m) => ({
    name: `fresh${m}`,
    description: `Fresh ${m}`,
    defaultDailyLimit: 1_000_000_000_000,
  })),
  eventTypes: [],
  providers: [],
  erasure: null,
  gateway: null,
};

type Latencies = Record<string, { p50: number; p99: number; errors: number; total: number }>;

export async function usageGrowth(databaseUrl: string): Promise<BenchResult> {
  const empty = await createDatabase(databaseUrl, 'usage_empty');
  const baseline = await side(empty.url);
  const subject = await side(databaseUrl);
  const figures: Figure[] = [];
  let failed = 0;
  let total = 0;
  try {
    let filled = 0;
    for (const size of SIZES) {
      if (size > filled) {
        const started = performance.now();
        await subject.fill(filled, size);
        filled = size;
        console.log(
          `filled to ${size} usage records in ${((performance.now() - started) / 1000).toFixed(0)} s`,
        );
      }
      await baseline.freshTail(size);
      await subject.freshTail(size);
      const rounds = await alternate(ROUNDS, baseline.round, subject.round);
      figures.push(...sizeFigures(size, rounds));
      for (const r of rounds)
        for (const probe of [...Object.values(r.baseline), ...Object.values(r.subject)]) {
          failed += probe.errors;
          total += probe.total;
        }
    }
    const sizes = await subject.sizes();
    figures.push({
      name: `the feed's storage at ${MAX / 1e6} M usage records`,
      subject: sizes,
      notes:
        'bytes: the totals (usage_daily), the feed’s index on them, and the records kept for deduplication',
    });
  } finally {
    await baseline.close();
    await subject.close();
    await empty.drop();
  }
  const checks = [
    { name: 'every probe answered 200', ok: failed === 0, detail: `${failed} of ${total} failed` },
  ];
  return { name: 'usage-growth', figures, checks, errors: { failed, total } };
}

function sizeFigures(size: number, rounds: { baseline: Latencies; subject: Latencies }[]): Figure[] {
  const label = size === 0 ? 'no usage history (control)' : `${size / 1e6} M usage records`;
  return Object.keys(rounds[0]?.subject ?? {}).map((probe) => {
    const of = (l: Latencies) => l[probe] ?? { p50: 0, p99: 0 };
    const p50 = spread(rounds.map((r) => of(r.subject).p50 / of(r.baseline).p50));
    const p99 = spread(rounds.map((r) => of(r.subject).p99 / of(r.baseline).p99));
    const ms = (values: number[]) => Number(spread(values).median.toFixed(2));
    return {
      name: `${label}: ${probe}, p50 latency vs none`,
      ratio: p50,
      target: `≤ ${TARGET}`,
      met: size === 0 ? undefined : p50.median <= TARGET,
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
}

/** One `serve` on its database: 100 projects, a capability granted usage:read (registered by the CLI). */
async function side(url: string) {
  await migrated(url);
  const tenants = await seedTenants(url, PROJECTS, 'ug');
  const env = { ...process.env, ...platformEnv(url) };
  const created = execFileSync(process.execPath, [BIN, 'capabilities', 'create', 'ubench', '--json'], {
    env,
  });
  const { key } = JSON.parse(String(created)) as { key: string };
  execFileSync(process.execPath, [BIN, 'capabilities', 'update', 'ubench', '--grants', 'usage:read'], {
    env,
  });
  const service = await startPlatform('serve', platformEnv(url));
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(service.baseUrl + path, {
      method,
      headers: {
        'x-api-key': key,
        ...(body ? { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (response.status !== 200)
      throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<{ data: unknown[]; nextCursor: string }>;
  };
  await call('PUT', '/capability/v1/manifest', MANIFEST);
  const client = new pg.Client(url);
  await client.connect();
  let tail = '';
  let end = '';

  /** Reads the feed from `cursor` to its end; the cursor there. */
  async function toEnd(cursor?: string) {
    for (;;) {
      const page = await call(
        'GET',
        `/capability/v1/usage/changes?limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
      );
      if (page.data.length === 0) return page.nextCursor;
      cursor = page.nextCursor;
    }
  }

  return {
    /** Usage records `from` to `to`, spread over 35 days of arrival, counted into their totals by day. */
    async fill(from: number, to: number) {
      await fillUsage(client, tenants, from, to);
    },

    /** The same 1,000 new totals on both sides, recorded through the API; the cursor before them. */
    async freshTail(size: number) {
      tail = await toEnd(tail || undefined);
      const records = tenants.flatMap((t, p) =>
        MANIFEST.metrics.map((m, i) => ({
          id: `fresh-${size}-${p}-${i}`,
          projectId: t.projectId,
          metric: m.name,
          value: 1,
        })),
      );
      for (let i = 0; i < records.length; i += 500)
        await call('POST', '/capability/v1/usage', { records: records.slice(i, i + 500) });
      end = await toEnd(tail);
      await client.query('vacuum analyze usage_daily');
    },

    round: () =>
      runLoad<Latencies>('probe.ts', {
        baseUrl: service.baseUrl,
        key,
        count: PROBES_PER_ROUND,
        probes: [
          {
            name: 'a page of 1,000 at the tail',
            paths: [`/capability/v1/usage/changes?limit=1000&cursor=${tail}`],
          },
          { name: 'the first page of 1,000', paths: ['/capability/v1/usage/changes?limit=1000'] },
          {
            name: 'a poll at the end (empty)',
            paths: [`/capability/v1/usage/changes?limit=1000&cursor=${end}`],
          },
        ],
      }),

    async sizes() {
      const { rows } = await client.query<{ name: string; bytes: string }>(
        `select name, pg_total_relation_size(name)::text as bytes
           from unnest(array['usage_daily', 'usage_daily_changes']) as name
         union all
         select 'usage_records', sum(pg_total_relation_size(inhrelid))::text
           from pg_inherits where inhparent = 'usage_records'::regclass`,
      );
      return Object.fromEntries(rows.map((r) => [r.name, Number(r.bytes)]));
    },

    async close() {
      await client.end();
      await service.stop();
    },
  };
}

/**
 * Records `from` to `to` into usage_records (the generations they arrived in) and their totals: a day's
 * records in 4 transactions, each counting its records into the day's totals as a capability's batch
 * does (the totals take that transaction's id, so the feed's index holds many positions).
 */
async function fillUsage(client: pg.Client, tenants: Tenant[], from: number, to: number) {
  const projects = tenants.map((t) => t.projectId);
  const perChunk = Math.ceil((to - from) / (DAYS * 4));
  for (let start = from, chunk = 0; start < to; start += perChunk, chunk++) {
    const count = Math.min(perChunk, to - start);
    const ago = DAYS - 1 - Math.floor(chunk / 4);
    await client.query('begin');
    await client.query(
      `create table if not exists usage_records_g${generation(ago)} partition of usage_records
         for values in (${generation(ago)})`,
    );
    await client.query(
      `with r as (
         insert into usage_records (generation, capability, id, project_id, metric, value, day, received_at)
         select $4, 'ubench', 'hist-' || i, ($1::uuid[])[1 + i % $5], 'm' || (i / $5) % $6, 1 + i % 7,
                current_date - $3::int, now() - make_interval(days => $3::int)
           from generate_series($2::bigint, $2::bigint + $7 - 1) as i
         returning project_id, day, metric, value
       )
       insert into usage_daily (project_id, day, capability, metric, count)
       select project_id, day, 'ubench', metric, sum(value) from r group by project_id, day, metric
       on conflict (project_id, day, capability, metric)
       do update set count = usage_daily.count + excluded.count, changed_xid = pg_current_xact_id()`,
      [projects, start, ago, generation(ago), projects.length, METRICS, count],
    );
    await client.query('commit');
  }
  await client.query('vacuum analyze usage_daily');
}

/** The generation a record arriving `ago` days back belongs to. */
const generation = (ago: number) => generationOf(new Date(Date.now() - ago * 86_400_000));
