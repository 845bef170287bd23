// The capability plane's second half: the gateway against a bare reverse proxy in front of the same
// upstream (baselines/proxy-bare.ts: what any proxy must at least do) and against the upstream called
// directly (its rate at c=32, and the latency it adds at 1,000 requests a second), and an erasure across 4
// capabilities that answer at once (p99 at 20 erasures a second).
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import {
  alternate,
  BIN,
  errorsOf,
  type Figure,
  type Measure,
  median,
  platformEnv,
  ratioFigure,
  runLoad,
  startBaseline,
} from './lib.ts';

const ROUNDS = 5;
const DURATION = 4;

/** A bare node:http server answering `body` on any path (the upstream, and the capabilities' erasure). */
const upstream = (body: string) => startBaseline('http-json.ts', [body]);

/** Registers a capability as an operator does (the CLI) and puts its manifest with its key. */
async function register(
  databaseUrl: string,
  baseUrl: string,
  name: string,
  options: string[],
  manifest: object,
) {
  const env = { ...process.env, ...platformEnv(databaseUrl) };
  const out = execFileSync(process.execPath, [BIN, 'capabilities', 'create', name, '--json', ...options], {
    env,
  });
  const { key } = JSON.parse(String(out)) as { key: string };
  const put = await fetch(`${baseUrl}/capability/v1/manifest`, {
    method: 'PUT',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': 'manifest' },
    body: JSON.stringify({
      description: `The benchmark’s ${name}`,
      scopes: [],
      metrics: [],
      eventTypes: [],
      providers: [],
      erasure: null,
      gateway: null,
      ...manifest,
    }),
  });
  if (put.status !== 200) throw new Error(`manifest of ${name}: ${put.status} ${await put.text()}`);
}

const readEverywhere = () => new Promise((resolve) => setTimeout(resolve, 5500));

export async function gatewayFigures(
  databaseUrl: string,
  baseUrl: string,
  tenant: { projectId: string; key: string },
  errors: { failed: number; total: number }[],
): Promise<Figure[]> {
  const direct = await upstream('{"id":"42","status":"sent"}');
  const proxy = await startBaseline('proxy-bare.ts', [direct.url]);
  try {
    await register(databaseUrl, baseUrl, 'gwbench', ['--upstream', direct.url], {
      scopes: [{ name: 'gwbench:read', description: 'Read' }],
      gateway: {
        routes: [{ method: 'GET', path: '/v1/messages/{id}', scope: 'gwbench:read', idempotent: false }],
      },
    });
    const client = new pg.Client(databaseUrl);
    await client.connect();
    await client.query(`update api_keys set scopes = scopes || '{gwbench:read}' where project_id = $1`, [
      tenant.projectId,
    ]);
    await client.end();
    await readEverywhere();

    const load = (url: string) => () =>
      runLoad<Measure>('http.ts', {
        url,
        connections: 32,
        duration: DURATION,
        headers: { 'x-api-key': tenant.key },
      });
    const rate = await alternate(
      ROUNDS,
      load(`${direct.url}/v1/messages/42`),
      load(`${baseUrl}/gwbench/v1/messages/42`),
    );
    errors.push(errorsOf(rate));
    const proxied = await alternate(
      ROUNDS,
      load(`${proxy.url}/v1/messages/42`),
      load(`${baseUrl}/gwbench/v1/messages/42`),
    );
    errors.push(errorsOf(proxied));

    const paced = (url: string, path: string) => () =>
      runLoad<Measure>('paced.ts', {
        baseUrl: url,
        path,
        method: 'GET',
        key: tenant.key,
        rate: 1000,
        seconds: 5,
      });
    const latency = await alternate(
      3,
      paced(direct.url, '/v1/messages/42'),
      paced(baseUrl, '/gwbench/v1/messages/42'),
    );
    errors.push(errorsOf(latency));
    const added = (p: 'p50' | 'p99') =>
      median(latency.map((r) => (r.subject[p] ?? 0) - (r.baseline[p] ?? 0)));
    return [
      ratioFigure('GET through the gateway vs a bare proxy to the same upstream (c=32)', proxied, 0.75),
      ratioFigure('GET through the gateway vs the same upstream called directly (c=32)', rate),
      {
        name: 'latency the gateway adds at 1,000 GET a second (ms)',
        target: '≤ 1 ms at p50, ≤ 3 ms at p99',
        met: added('p50') <= 1 && added('p99') <= 3,
        subject: { p50: added('p50'), p99: added('p99') },
        notes: `through the gateway p50 ${median(latency.map((r) => r.subject.p50 ?? 0))} ms, p99 ${median(latency.map((r) => r.subject.p99 ?? 0))} ms; direct p50 ${median(latency.map((r) => r.baseline.p50 ?? 0))} ms, p99 ${median(latency.map((r) => r.baseline.p99 ?? 0))} ms`,
      },
    ];
  } finally {
    await proxy.stop();
    await direct.stop();
  }
}

/** 20 erasures a second for 10 s, each asking 4 pushed capabilities that answer at once: p99. */
export async function erasureFigure(
  databaseUrl: string,
  baseUrl: string,
  tenant: { key: string },
  errors: { failed: number; total: number }[],
): Promise<Figure> {
  const answering = await upstream('{"erased":0}');
  try {
    for (const name of ['erase_a', 'erase_b', 'erase_c', 'erase_d'])
      await register(databaseUrl, baseUrl, name, ['--erasure-url', `${answering.url}/erasure`], {
        erasure: { mode: 'push', timeoutSeconds: 5 },
      });
    await readEverywhere();
    const result = await runLoad<Measure>('paced.ts', {
      baseUrl,
      path: '/core/v1/subjects/erase',
      method: 'POST',
      key: tenant.key,
      body: { subject: { type: 'external_id', value: 'bench-user' } },
      rate: 20,
      seconds: 10,
    });
    errors.push({ failed: result.errors, total: result.total });
    return {
      name: 'POST /core/v1/subjects/erase across 4 capabilities that answer at once, 20/s: p99 (ms)',
      target: 'p99 ≤ 50 ms',
      met: (result.p99 ?? Number.POSITIVE_INFINITY) <= 50,
      subject: { rate: Math.round(result.rate), p50: result.p50 ?? 0, p99: result.p99 ?? 0 },
    };
  } finally {
    await answering.stop();
  }
}
