// capability: the capability plane on its hot paths. Key verification against GET /core/v1/projects/me
// (the same machinery minus the project read); usage ingestion against a raw loop inserting the same
// batches into a table with the same unique key, with the counters summed against what was sent; 1,000
// reservations a second against projects/me at the same rate (p99, the database's own commit beside);
// 4 clients racing 2 `serve` processes for a scarce limit (no over-admission); the SDK's recorder's CPU
// per record; then the gateway and erasure across capabilities (capability-plane.ts).
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { erasureFigure, gatewayFigures } from './capability-plane.ts';
import {
  alternate,
  type BenchResult,
  BIN,
  type Check,
  errorsOf,
  type Figure,
  type Measure,
  median,
  platformEnv,
  ratioFigure,
  runLoad,
  startPlatform,
} from './lib.ts';
import { migrated, seedTenants, type Tenant } from './seed.ts';

const ROUNDS = 5;
const DURATION = 4;
const SCARCE_LIMIT = 3000;
const MANIFEST = {
  description: 'The benchmark’s product',
  scopes: [{ name: 'bench:use', description: 'Use it' }],
  metrics: [
    { name: 'units', description: 'Units used', defaultDailyLimit: 1_000_000_000_000 },
    { name: 'scarce', description: 'Units of a small allowance', defaultDailyLimit: SCARCE_LIMIT },
  ],
  eventTypes: [],
  providers: [],
  erasure: null,
  gateway: null,
};

/** Registers the capability as an operator does (the CLI), and declares its manifest with its key. */
async function register(databaseUrl: string, baseUrl: string) {
  const env = { ...process.env, ...platformEnv(databaseUrl) };
  const out = execFileSync(process.execPath, [BIN, 'capabilities', 'create', 'bench', '--json'], { env });
  const { key } = JSON.parse(String(out)) as { key: string };
  const put = await fetch(`${baseUrl}/capability/v1/manifest`, {
    method: 'PUT',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': 'manifest' },
    body: JSON.stringify(MANIFEST),
  });
  if (put.status !== 200) throw new Error(`manifest: ${put.status} ${await put.text()}`);
  await new Promise((resolve) => setTimeout(resolve, 5500)); // every process has read it
  return key;
}

export async function capability(databaseUrl: string): Promise<BenchResult> {
  await migrated(databaseUrl);
  const tenants = await seedTenants(databaseUrl, 8, 'cap');
  const [tenant] = tenants;
  if (!tenant) throw new Error('no tenant');
  const first = await startPlatform('serve', platformEnv(databaseUrl));
  const second = await startPlatform('serve', platformEnv(databaseUrl));
  try {
    const key = await register(databaseUrl, first.baseUrl);
    const figures: Figure[] = [];
    const checks: Check[] = [];
    const errors: { failed: number; total: number }[] = [];

    // Verification: a capability asking about a project's key, vs the project's key asking about itself.
    const load = (path: string, headers: Record<string, string>, body?: unknown) => () =>
      runLoad<Measure>('http.ts', {
        url: `${first.baseUrl}${path}`,
        method: body ? 'POST' : 'GET',
        connections: 32,
        duration: DURATION,
        headers: body ? { ...headers, 'content-type': 'application/json' } : headers,
        body: body ? JSON.stringify(body) : undefined,
      });
    const verifyRounds = await alternate(
      ROUNDS,
      load('/core/v1/projects/me', { 'x-api-key': tenant.key }),
      load('/capability/v1/keys/verify', { 'x-api-key': key }, { key: tenant.key, scopes: ['usage:read'] }),
    );
    figures.push(
      ratioFigure('POST /capability/v1/keys/verify vs GET /core/v1/projects/me (c=32)', verifyRounds, 0.9),
    );
    errors.push(errorsOf(verifyRounds));

    figures.push(...(await ingestion(databaseUrl, first.baseUrl, key, tenants, checks, errors)));
    figures.push(await reservations(databaseUrl, first.baseUrl, key, tenant, errors));
    checks.push(
      await race([first.baseUrl, second.baseUrl], key, tenants[1]?.projectId as string, databaseUrl),
    );
    figures.push(await recorderCost());
    figures.push(...(await gatewayFigures(databaseUrl, first.baseUrl, tenants[2] as Tenant, errors)));
    figures.push(await erasureFigure(databaseUrl, first.baseUrl, tenants[3] as Tenant, errors));
    figures.push(await feedFigure(databaseUrl, first.baseUrl, key, tenants, errors));
    return {
      name: 'capability',
      figures,
      checks,
      errors: errors.reduce((sum, e) => ({ failed: sum.failed + e.failed, total: sum.total + e.total })),
    };
  } finally {
    await first.stop();
    await second.stop();
  }
}

/** Batches of 500 at c=8, through the service and raw; then the counters summed against what was accepted. */
async function ingestion(
  databaseUrl: string,
  baseUrl: string,
  key: string,
  tenants: { projectId: string }[],
  checks: Check[],
  errors: { failed: number; total: number }[],
): Promise<Figure[]> {
  let round = 0;
  let accepted = 0;
  const projects = tenants.map((t) => t.projectId);
  const run = (mode: 'service' | 'raw') => async () => {
    const result = await runLoad<Measure & { accepted: number }>('usage.ts', {
      mode,
      url: mode === 'service' ? baseUrl : databaseUrl,
      key,
      projects,
      connections: 8,
      duration: DURATION,
      batch: 500,
      prefix: `${mode}-${round++}`,
    });
    if (mode === 'service') accepted += result.accepted;
    return result;
  };
  const rounds = await alternate(ROUNDS, run('raw'), run('service'));
  errors.push(errorsOf(rounds));
  const client = new pg.Client(databaseUrl);
  await client.connect();
  const { rows } = await client.query<{ counted: string; records: string }>(
    `select (select coalesce(sum(count), 0) from usage_daily where capability = 'bench' and metric = 'units') as counted,
            (select count(*) from usage_records where capability = 'bench') as records`,
  );
  await client.end();
  const counted = Number(rows[0]?.counted);
  checks.push({
    name: 'exactly once: the counters sum to the records the service accepted, each stored once',
    ok: counted === accepted && Number(rows[0]?.records) === accepted,
    detail: `accepted ${accepted}, counted ${counted}, stored ${rows[0]?.records}`,
  });
  const rate = median(rounds.map((r) => r.subject.rate));
  return [
    ratioFigure('POST /capability/v1/usage vs raw multi-row INSERT, batches of 500 (c=8)', rounds, 0.5),
    {
      name: 'usage records a second through the service',
      target: '≥ 20000',
      met: rate >= 20_000,
      subject: { rate: Math.round(rate) },
    },
  ];
}

/**
 * 1,000 reservations a second vs 1,000 GET projects/me a second, each request timed from when it went
 * (load/schedule.ts): p99 against p99, with the database's own commit at that rate beside them.
 */
async function reservations(
  databaseUrl: string,
  baseUrl: string,
  key: string,
  tenant: { projectId: string; key: string },
  errors: { failed: number; total: number }[],
): Promise<Figure> {
  const paced = (path: string, apiKey: string, body?: unknown) => () =>
    runLoad<Measure>('paced.ts', {
      baseUrl,
      path,
      method: body ? 'POST' : 'GET',
      key: apiKey,
      body,
      rate: 1000,
      seconds: 5,
    });
  const rounds = await alternate(
    3,
    paced('/core/v1/projects/me', tenant.key),
    paced('/capability/v1/reservations', key, { projectId: tenant.projectId, metric: 'units', amount: 1 }),
  );
  errors.push(errorsOf(rounds));
  // What the database alone takes for a durable write at this rate: the floor under the reservation's.
  const commits: Measure[] = [];
  for (let i = 0; i < 3; i++)
    commits.push(
      await runLoad<Measure>('paced-commit.ts', {
        url: databaseUrl,
        rate: 1000,
        seconds: 5,
        connections: 16,
      }),
    );
  errors.push(...commits.map((c) => ({ failed: c.errors, total: c.total })));
  const p99 = spreadOf(rounds.map((r) => (r.subject.p99 ?? 0) / Math.max(r.baseline.p99 ?? 0, 0.001)));
  const subjectP99 = median(rounds.map((r) => r.subject.p99 ?? 0));
  return {
    name: 'POST /capability/v1/reservations at 1,000/s: p99 vs GET /core/v1/projects/me at 1,000/s',
    ratio: p99,
    target: 'p99 ≤ 3×',
    met: p99.median <= 3,
    subject: {
      rate: Math.round(median(rounds.map((r) => r.subject.rate))),
      p50: median(rounds.map((r) => r.subject.p50 ?? 0)),
      p99: subjectP99,
    },
    baseline: {
      rate: Math.round(median(rounds.map((r) => r.baseline.rate))),
      p50: median(rounds.map((r) => r.baseline.p50 ?? 0)),
      p99: median(rounds.map((r) => r.baseline.p99 ?? 0)),
    },
    notes: `the ratio here is of p99 latencies: lower is better. The database alone, a one-row INSERT committed at 1,000/s from 16 connections: p50 ${median(commits.map((c) => c.p50 ?? 0)).toFixed(2)} ms, p99 ${median(commits.map((c) => c.p99 ?? 0)).toFixed(2)} ms`,
  };
}

const spreadOf = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: median(values), min: sorted[0] ?? 0, max: sorted.at(-1) ?? 0 };
};

/** 4 client processes × 16 loops against 2 serve processes, for a limit of SCARCE_LIMIT. */
async function race(urls: string[], key: string, projectId: string, databaseUrl: string): Promise<Check> {
  const clients = await Promise.all(
    Array.from({ length: 4 }, () =>
      runLoad<{ granted: number; committed: number; errors: number }>('reserve-race.ts', {
        urls,
        key,
        projectId,
        metric: 'scarce',
        connections: 16,
      }),
    ),
  );
  const granted = clients.reduce((sum, c) => sum + c.granted, 0);
  const failed = clients.reduce((sum, c) => sum + c.errors, 0);
  const client = new pg.Client(databaseUrl);
  await client.connect();
  const { rows } = await client.query<{ used: string }>(
    `select coalesce(sum(count), 0) as used from usage_daily where capability = 'bench' and metric = 'scarce'`,
  );
  await client.end();
  return {
    name: `no over-admission: 4 clients × 16 loops on 2 serve processes, limit ${SCARCE_LIMIT}`,
    ok: granted <= SCARCE_LIMIT && Number(rows[0]?.used) <= SCARCE_LIMIT && failed === 0,
    detail: `granted ${granted} of ${SCARCE_LIMIT} (committed and used ${rows[0]?.used}); ${failed} errors`,
  };
}

/**
 * The usage change feed read a page of 1,000 at a time, through the service against the same keyset
 * SELECT from a pg client: 8 projects × 365 days × 20 metrics of totals (58,400), read end to end.
 */
async function feedFigure(
  databaseUrl: string,
  baseUrl: string,
  key: string,
  tenants: { projectId: string }[],
  errors: { failed: number; total: number }[],
): Promise<Figure> {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  await client.query(
    `insert into usage_daily (project_id, day, capability, metric, count)
     select p, current_date - d, 'feedbench', 'm' || m, d + m
       from unnest($1::uuid[]) as p, generate_series(0, 364) as d, generate_series(0, 19) as m
     on conflict do nothing`,
    [tenants.map((t) => t.projectId)],
  );
  await client.query(`update capabilities set grants = '{usage:read}' where name = 'bench'`);
  await client.query('analyze usage_daily');
  await client.end();
  await new Promise((resolve) => setTimeout(resolve, 5500)); // every process has read the grant
  const run = (mode: 'service' | 'raw') => () =>
    runLoad<Measure>('feed.ts', {
      mode,
      url: mode === 'service' ? baseUrl : databaseUrl,
      key,
      duration: DURATION,
    });
  const rounds = await alternate(ROUNDS, run('raw'), run('service'));
  errors.push(errorsOf(rounds));
  return ratioFigure(
    'GET /capability/v1/usage/changes vs the same keyset SELECT, pages of 1,000 (totals a second)',
    rounds,
    0.7,
  );
}

/** The recorder's CPU per record, against the least a recorder does. */
async function recorderCost(): Promise<Figure> {
  const run = (mode: 'sdk' | 'minimal') => () =>
    runLoad<Measure & { perRecordMicros: number }>('recorder.ts', { mode, records: 300_000 });
  const rounds = await alternate(ROUNDS, run('minimal'), run('sdk'));
  const micros = median(rounds.map((r) => r.subject.perRecordMicros));
  return {
    ...ratioFigure('the SDK’s recorder: records per CPU second vs the least a recorder does', rounds),
    target: '≤ 2 µs of CPU per record',
    met: micros <= 2,
    notes: `${micros.toFixed(2)} µs per record (the least: ${median(rounds.map((r) => r.baseline.perRecordMicros)).toFixed(2)} µs)`,
  };
}
