// Usage records are counted exactly once through the faults a client meets: a batch whose answer is lost
// (the client retries what was committed), a `serve` process killed with SIGKILL while batches are in
// flight, and PostgreSQL restarted under load. Each record is counted once: never twice, and never lost
// once its batch was answered 200.
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { openEmbeddedCluster } from '../src/db/embedded.ts';
import { startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { adminUrl, databaseAddress, freshDatabase } from './helpers/database.ts';
import { startProcess } from './helpers/process.ts';
import { startProxy } from './helpers/proxy.ts';

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
    const proxy = embedded ? undefined : await startProxy(databaseAddress(databaseUrl));
    if (proxy) after(() => proxy.close());
    const url = proxy
      ? `postgresql://postgres@127.0.0.1:${proxy.port}${new URL(databaseUrl).pathname}`
      : databaseUrl;
    const serve = await startProcess('serve', env(url));
    const statuses = new Map<string, number>();
    let next = 0;
    let stopping = false;
    const loops = Array.from({ length: 8 }, async () => {
      while (!stopping) {
        const batch = batchOf(tenant.projectId, `restart-${next++}`, 200);
        for (;;) {
          const status = await send(serve.baseUrl, batch, AbortSignal.timeout(20_000)).then(
            (r) => String(r.status),
            (error: Error) => error.name,
          );
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (status === '200') break;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    });
    const dataDir = embedded ? path.dirname(new URL(adminUrl()).searchParams.get('host') as string) : '';
    await new Promise((resolve) => setTimeout(resolve, 1000));
    if (proxy) await proxy.cut();
    else await (await openEmbeddedCluster(dataDir, () => {})).stop();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    if (proxy) await proxy.restore();
    else await openEmbeddedCluster(dataDir, () => {});
    await new Promise((resolve) => setTimeout(resolve, 2000));
    stopping = true;
    await Promise.all(loops);
    assert.equal(serve.child.exitCode, null, 'serve stayed up');
    assert.ok(
      [...statuses.keys()].some((s) => s !== '200'),
      `the outage was met: ${JSON.stringify([...statuses])}`,
    );
    assert.equal(await counted(tenant.projectId), next * 200, JSON.stringify([...statuses]));
  });
});
