// Usage records are counted exactly once through the faults a client meets: a batch whose answer is lost
// (the client retries what was committed), a `serve` process killed with SIGKILL while batches are in
// flight, and PostgreSQL restarted under load. Each record is counted once: never twice, and never lost
// once its batch was answered 200.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { after, describe, test } from 'node:test';
import { startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { adminUrl, freshDatabase } from './helpers/database.ts';
import { outageUrl as lossyUrl, restartDatabase } from './helpers/outage.ts';
import { startProcess } from './helpers/process.ts';
import type { Proxy as DatabaseProxy } from './helpers/proxy.ts';

const embedded = new URL(adminUrl()).searchParams.get('host')?.startsWith('/') ?? false;
const databaseUrl = await freshDatabase();
const setup = await startService({ databaseUrl });
const MANIFEST = {
  description: 'Counted things',
  scopes: [],
  metrics: [{ name: 'units', description: 'Units' }],
  eventTypes: [],
  providers: [],
  erasure: null,
  gateway: null,
};
const cap = await setup.capability('faulty', { manifest: MANIFEST });
const env = (url = databaseUrl) => ({
  DATABASE_URL: url,
  PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
  PLATFORM_RATE_LIMIT_PER_SECOND: '0',
  PLATFORM_LOG_LEVEL: 'warn',
});

const batchOf = (projectId: string, prefix: string, size: number) => ({
  records: Array.from({ length: size }, (_, i) => ({
    id: `${prefix}-${i}`,
    projectId,
    metric: 'units',
    value: 1,
  })),
});
const send = (baseUrl: string, body: unknown, signal?: AbortSignal) =>
  fetch(`${baseUrl}/capability/v1/usage`, {
    method: 'POST',
    headers: { 'x-api-key': cap.key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
const counted = async (projectId: string) => {
  const { rows } = await setup.db.query<{ count: number }>(
    `select coalesce(sum(count), 0)::int as count from usage_daily where project_id = $1 and capability = 'faulty'`,
    [projectId],
  );
  return rows[0]?.count ?? 0;
};

/** A proxy that passes requests on and drops every answer: the client's request ran, its answer is lost. */
async function answerLosingProxy(target: URL) {
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    client.pipe(upstream);
    upstream.once('data', () => client.destroy());
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

/** Where a `serve` process under test reaches the database: through a proxy we can cut, for a server. */
async function outageUrl() {
  const { url, proxy } = await lossyUrl(databaseUrl);
  if (proxy) proxy$.push(proxy);
  return url;
}
const proxy$: DatabaseProxy[] = [];

/**
 * Runs `clients` loops of `step` while PostgreSQL restarts (or, for a server, while its proxy cuts every
 * connection for 2 s); every status the steps met, counted. Fails on any 500: an outage is a 503.
 */
async function throughARestart(
  serve: Awaited<ReturnType<typeof startProcess>>,
  step: (stopping: () => boolean) => Promise<string[]>,
  clients = 8,
) {
  const statuses = new Map<string, number>();
  let stopping = false;
  const loops = Array.from({ length: clients }, async () => {
    while (!stopping)
      for (const status of await step(() => stopping)) statuses.set(status, (statuses.get(status) ?? 0) + 1);
  });
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await restartDatabase(embedded ? undefined : proxy$.at(-1));
  } finally {
    stopping = true; // the loops end whatever happened
    await Promise.all(loops);
  }
  assert.equal(serve.child.exitCode, null, 'serve stayed up');
  const met = [...statuses.keys()].filter((s) => !['200', '201', '429', 'commit 200'].includes(s));
  assert.ok(met.length > 0, `the outage was met: ${JSON.stringify([...statuses])}`);
  const faults = serve
    .output()
    .split('\n')
    .filter((line) => line.includes('INTERNAL'));
  assert.ok(
    ![...statuses.keys()].some((s) => s.endsWith('500')),
    `an outage is a 503, never a 500: ${JSON.stringify([...statuses])}\n${faults.slice(0, 5).join('\n')}`,
  );
  if (process.env.SHOW_STATUSES) console.log(JSON.stringify([...statuses]));
  return statuses;
}

const post = (baseUrl: string, path: string, body: unknown) =>
  fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': cap.key, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  }).catch((error: Error) => ({ status: error.name, json: async () => ({}) }) as unknown as Response);

describe('usage counted exactly once through faults', () => {
  test('a batch whose answer was lost, retried: every record a duplicate, counted once', async () => {
    const tenant = await setup.tenant();
    const serve = await startProcess('serve', env());
    const lossy = await answerLosingProxy(new URL(serve.baseUrl));
    const batch = batchOf(tenant.projectId, 'lost', 1000);
    await assert.rejects(send(lossy, batch), 'the client never hears back');
    const retried = await send(serve.baseUrl, batch);
    assert.equal(retried.status, 200);
    assert.deepEqual(await retried.json(), { accepted: 0, duplicates: 1000 });
    assert.equal(await counted(tenant.projectId), 1000);
  });

  test('serve killed (SIGKILL) with batches in flight, every batch sent again to a new one: each record once', {
    timeout: 90_000,
  }, async () => {
    const tenant = await setup.tenant();
    const batches = Array.from({ length: 24 }, (_, i) => batchOf(tenant.projectId, `kill-${i}`, 500));
    const first = await startProcess('serve', env());
    const answered: number[] = [];
    const inFlight = batches.map((batch, i) =>
      send(first.baseUrl, batch).then(
        (response) => response.status === 200 && answered.push(i),
        () => undefined,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    await first.stop('SIGKILL');
    await Promise.all(inFlight);
    const before = await counted(tenant.projectId);
    assert.ok(before >= answered.length * 500, 'every batch answered 200 was counted');
    const second = await startProcess('serve', env());
    for (const batch of batches) assert.equal((await send(second.baseUrl, batch)).status, 200);
    assert.equal(await counted(tenant.projectId), 24 * 500);
    assert.ok(
      before < 24 * 500 || answered.length === 24,
      `killed mid-way: ${before} counted before the retries`,
    );
  });

  test('PostgreSQL restarted under load, each batch retried until answered: each record once', {
    timeout: 120_000,
  }, async () => {
    const tenant = await setup.tenant();
    const serve = await startProcess('serve', env(await outageUrl()));
    let next = 0;
    const statuses = await throughARestart(serve, async (stopping) => {
      const batch = batchOf(tenant.projectId, `restart-${next++}`, 200);
      const seen: string[] = [];
      for (;;) {
        const status = await send(serve.baseUrl, batch, AbortSignal.timeout(20_000)).then(
          (r) => String(r.status),
          (error: Error) => error.name,
        );
        seen.push(status);
        if (status === '200' || stopping()) return seen;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    });
    // A batch left unanswered when the load stopped is sent once more, now the database is back.
    for (let i = 0; i < next; i++) await send(serve.baseUrl, batchOf(tenant.projectId, `restart-${i}`, 200));
    assert.equal(await counted(tenant.projectId), next * 200, JSON.stringify([...statuses]));
  });

  test('PostgreSQL restarted under reservations from 16 clients: never past the limit, every fault a 503', {
    timeout: 120_000,
  }, async () => {
    const tenant = await setup.tenant();
    const operator = await setup.operator();
    const limited = await setup.request('PUT', `/admin/v1/projects/${tenant.projectId}/limits/faulty/units`, {
      key: operator.key,
      body: { dailyLimit: 100 },
      headers: { 'idempotency-key': 'limit-100' },
    });
    assert.equal(limited.status, 200, limited.text);
    const serve = await startProcess('serve', env(await outageUrl()));
    const statuses = await throughARestart(
      serve,
      async () => {
        const reserved = await post(serve.baseUrl, '/capability/v1/reservations', {
          projectId: tenant.projectId,
          metric: 'units',
          amount: 1,
        });
        if (reserved.status !== 201) return [String(reserved.status)];
        const id = ((await reserved.json()) as { id: string }).id;
        const committed = await post(serve.baseUrl, `/capability/v1/reservations/${id}/commit`, {
          amount: 1,
        });
        return ['201', `commit ${committed.status}`];
      },
      16,
    );
    const today = await setup.request('GET', `/capability/v1/limits/${tenant.projectId}/units`, {
      key: cap.key,
    });
    assert.ok(today.body.used + today.body.reserved <= 100, JSON.stringify(today.body));
    assert.ok((statuses.get('commit 200') ?? 0) <= 100, JSON.stringify([...statuses]));
    assert.ok((statuses.get('429') ?? 0) > 0, `the limit was reached: ${JSON.stringify([...statuses])}`);
  });
});
