// The database goes away under load: restarted (the embedded server is really restarted; a server we do
// not own is cut off through a proxy, as a restart looks to its clients), or refusing connections (a role
// at its connection limit, SQLSTATE 53300). `serve`, `worker` and `start` all stay up, requests the outage
// touches get 503, health goes 503 then 200, and nothing accepted is lost.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { openEmbeddedCluster } from '../src/db/embedded.ts';
import { startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { adminUrl, databaseAddress, freshDatabase } from './helpers/database.ts';
import { type ServiceProcess, startProcess } from './helpers/process.ts';
import { startProxy } from './helpers/proxy.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const embedded = new URL(adminUrl()).searchParams.get('host')?.startsWith('/') ?? false;
const databaseUrl = await freshDatabase();
const setup = await startService({ databaseUrl, env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1' } });
const receiver = await startReceiver();

const childEnv = (url: string) => ({
  DATABASE_URL: url,
  PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
  PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
  PLATFORM_RATE_LIMIT_PER_SECOND: '0',
  PLATFORM_WORKER_POLL_MS: '200',
  PLATFORM_LOG_LEVEL: 'warn',
});

/** 16 publishers in a loop until stopped: every answer's status, and the events accepted. */
function load(baseUrls: string[], key: string) {
  const statuses = new Map<number | string, number>();
  const accepted: string[] = [];
  let running = true;
  let n = 0;
  const loops = Array.from({ length: 16 }, async (_, worker) => {
    while (running) {
      const i = ++n;
      try {
        const response = await fetch(`${baseUrls[i % baseUrls.length]}/core/v1/events`, {
          method: 'POST',
          headers: {
            'x-api-key': key,
            'content-type': 'application/json',
            'idempotency-key': `o-${worker}-${i}`,
          },
          body: JSON.stringify({ type: 'pay.payment.succeeded', data: { i } }),
          signal: AbortSignal.timeout(15_000),
        });
        const body = (await response.json()) as { eventId?: string };
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (response.status === 202 && body.eventId) accepted.push(body.eventId);
      } catch (error) {
        const code = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
        statuses.set(code, (statuses.get(code) ?? 0) + 1);
      }
    }
  });
  return {
    accepted,
    statuses,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

async function healthOf(baseUrl: string, key: string) {
  const response = await fetch(`${baseUrl}/api/health`, { headers: { 'x-api-key': key } });
  return { status: response.status, body: (await response.json()) as { db: string; status: string } };
}

/** Every process still runs, and every accepted event is in the database and reaches the receiver. */
async function nothingLostNothingDown(processes: ServiceProcess[], accepted: string[]) {
  for (const process of processes) assert.equal(process.child.exitCode, null, `exited:\n${process.output()}`);
  const { rows } = await setup.db.query('select id from events where id = any ($1::uuid[])', [accepted]);
  assert.equal(rows.length, accepted.length, 'every accepted event is stored');
  await eventually(
    async () => {
      const delivered = new Set(receiver.received.map((r) => r.headers['webhook-id']));
      return accepted.every((id) => delivered.has(id));
    },
    60_000,
    'every accepted event delivered',
  );
}

describe('the database goes away under load', () => {
  test('PostgreSQL restarted: serve, worker and start stay up; health 503 then 200; nothing lost', {
    timeout: 120_000,
  }, async () => {
    const tenant = await setup.tenant();
    await setup.request('POST', '/core/v1/webhook-endpoints', {
      key: tenant.key,
      body: { url: receiver.url, eventTypes: ['*'] },
      headers: { 'idempotency-key': 'restart-endpoint' },
    });
    // Embedded: the processes connect directly and the server itself restarts. A server: through a proxy.
    const proxy = embedded ? undefined : await startProxy(databaseAddress(databaseUrl));
    if (proxy) after(() => proxy.close());
    const url = proxy
      ? `postgresql://postgres@127.0.0.1:${proxy.port}${new URL(databaseUrl).pathname}`
      : databaseUrl;
    const processes = await Promise.all([
      startProcess('serve', childEnv(url)),
      startProcess('start', childEnv(url)),
      startProcess('worker', childEnv(url)),
    ]);
    const apis = processes.filter((p) => p.baseUrl);
    const traffic = load(
      apis.map((p) => p.baseUrl),
      tenant.key,
    );
    const dataDir = embedded ? path.dirname(new URL(adminUrl()).searchParams.get('host') as string) : '';
    let during: Awaited<ReturnType<typeof healthOf>> | undefined;
    try {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      if (proxy) await proxy.cut();
      else await (await openEmbeddedCluster(dataDir, () => {})).stop();
      during = await healthOf(apis[0]?.baseUrl as string, tenant.key).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      if (proxy) await proxy.restore();
      else await openEmbeddedCluster(dataDir, () => {});
      for (const api of apis) {
        const healthy = async () =>
          (await healthOf(api.baseUrl, tenant.key).catch(() => undefined))?.status === 200;
        await eventually(healthy, 30_000, `health 200 again:\n${api.output()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 1500));
    } finally {
      await traffic.stop();
    }

    if (during) {
      assert.equal(during.status, 503, JSON.stringify(during));
      assert.equal(during.body.db, 'down');
    }
    const answers = Object.fromEntries(traffic.statuses);
    const faults = processes
      .map((p) => p.output())
      .join('\n')
      .split('\n')
      .filter((line) => /"level":50/.test(line));
    for (const status of Object.keys(answers))
      assert.ok(
        ['202', '503'].includes(status),
        `only 202 and 503: ${JSON.stringify(answers)}\n${faults.join('\n')}`,
      );
    assert.ok(traffic.accepted.length > 0);
    await nothingLostNothingDown(processes, traffic.accepted);
  });

  test('connections refused (a role at its connection limit, 53300): affected requests 503, nothing down', {
    timeout: 120_000,
  }, async () => {
    const tenant = await setup.tenant();
    await setup.request('POST', '/core/v1/webhook-endpoints', {
      key: tenant.key,
      body: { url: receiver.url, eventTypes: ['*'] },
      headers: { 'idempotency-key': 'limit-endpoint' },
    });
    const role = `pc_limited_${process.pid}`;
    // Four connections: its settings listener, its notifier, and two for its pool (settings/lease.ts).
    await setup.db.query(`create role ${role} login connection limit 4`);
    for (const grant of [
      `grant usage on schema public to ${role}`,
      `grant select, insert, update, delete on all tables in schema public to ${role}`,
      `grant usage on all sequences in schema public to ${role}`,
    ])
      await setup.db.query(grant);
    const limited = new URL(databaseUrl);
    limited.username = role;
    const processes = await Promise.all([
      startProcess('serve', childEnv(limited.toString())),
      startProcess('worker', childEnv(databaseUrl)),
    ]);
    try {
      const traffic = load([processes[0]?.baseUrl as string], tenant.key);
      await new Promise((resolve) => setTimeout(resolve, 3000)).finally(() => traffic.stop());
      const answers = Object.fromEntries(traffic.statuses);
      assert.ok((answers['503'] ?? 0) > 0, `some requests found no connection: ${JSON.stringify(answers)}`);
      assert.ok((answers['202'] ?? 0) > 0, `the others were served: ${JSON.stringify(answers)}`);
      for (const status of Object.keys(answers))
        assert.ok(['202', '503'].includes(status), `only 202 and 503: ${JSON.stringify(answers)}`);
      await nothingLostNothingDown(processes, traffic.accepted);
      // Serving again, once its pool holds a connection (one at a time: a second would meet the limit).
      await eventually(
        async () => {
          const after = await fetch(`${processes[0]?.baseUrl}/core/v1/webhook-endpoints`, {
            headers: { 'x-api-key': tenant.key },
          });
          return after.status === 200;
        },
        10_000,
        'serving again',
      );
    } finally {
      await Promise.all(processes.map((p) => p.stop()));
      await setup.db.query(`drop owned by ${role}`);
      await setup.db.query(`drop role ${role}`);
    }
  });
});
