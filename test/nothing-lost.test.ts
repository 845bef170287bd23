// Nothing lost: 2,000 events to 3 endpoints (6,000 deliveries) reach their receivers at least once
// although the worker process is killed with SIGKILL half-way, and although PostgreSQL restarts half-way.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { openEmbeddedCluster } from '../src/db/embedded.ts';
import { stateOf } from '../src/delivery-store/state.ts';
import { spawnNode } from '../support/process.ts';
import { startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { adminUrl, databaseAddress } from './helpers/database.ts';
import { childEnv } from './helpers/process.ts';
import { startProxy } from './helpers/proxy.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const EVENTS = 2000;
const ENDPOINTS = 3;
const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const embedded = new URL(adminUrl()).searchParams.get('host')?.startsWith('/') ?? false;

async function scenario(
  interrupt: (progress: { workers: ChildProcess[]; databaseUrl: string }) => Promise<void>,
  workerEnv: Record<string, string> = {},
) {
  const service = await startService({
    env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_RATE_LIMIT_PER_SECOND: '0' },
  });
  const tenant = await service.tenant();
  const receivers = await Promise.all(Array.from({ length: ENDPOINTS }, () => startReceiver()));
  for (const [i, receiver] of receivers.entries()) {
    const created = await service.request('POST', '/core/v1/webhook-endpoints', {
      key: tenant.key,
      body: { url: receiver.url, eventTypes: ['*'] },
      headers: { 'idempotency-key': `endpoint-${i}` },
    });
    assert.equal(created.status, 201, created.text);
  }
  // Publish through the API, 25 at a time.
  for (let i = 0; i < EVENTS; i += 25) {
    await Promise.all(
      Array.from({ length: 25 }, (_, j) =>
        service.request('POST', '/core/v1/events', {
          key: tenant.key,
          body: { type: 'pay.payment.succeeded', data: { n: i + j } },
          headers: { 'idempotency-key': `e-${i + j}` },
        }),
      ),
    ).then((responses) => {
      for (const response of responses) assert.equal(response.status, 202, response.text);
    });
  }
  const databaseUrl = service.context.config.databaseUrl as string;
  const workers = [startWorker(databaseUrl, workerEnv)];
  const unique = () =>
    receivers.reduce((sum, r) => sum + new Set(r.received.map((x) => x.headers['webhook-id'])).size, 0);
  await eventually(async () => unique() >= (EVENTS * ENDPOINTS) / 3, 60_000, 'a third delivered');
  await interrupt({ workers, databaseUrl });
  await eventually(async () => unique() === EVENTS * ENDPOINTS, 120_000, 'every delivery');

  // Everything arrived; the database settles too once the killed worker's leases expire (its last sends
  // were made but never recorded, so they are made again: at least once).
  const settled = await eventually(
    async () => {
      const { rows } = await service.db.query(
        `select ${stateOf('d')} as state, count(*)::int as n from deliveries d group by 1`,
      );
      return rows.length === 1 && rows;
    },
    60_000,
    'deliveries to settle',
  ).catch(
    async () =>
      (
        await service.db.query(
          `select ${stateOf('d')} as state, count(*)::int as n from deliveries d group by 1`,
        )
      ).rows,
  );
  assert.deepEqual(settled, [{ state: 'delivered', n: EVENTS * ENDPOINTS }], 'none pending, dead or stuck');
  for (const receiver of receivers)
    assert.equal(new Set(receiver.received.map((x) => x.headers['webhook-id'])).size, EVENTS);
  for (const worker of workers) worker.kill('SIGTERM');
  const attempts = await service.db.query(`select count(*)::int as n from delivery_attempts`);
  return {
    received: receivers.reduce((sum, r) => sum + r.received.length, 0),
    attempts: attempts.rows[0]?.n as number,
  };
}

function startWorker(databaseUrl: string, env: Record<string, string> = {}): ChildProcess {
  const worker = spawnNode(
    MAIN,
    ['worker'],
    childEnv({
      DATABASE_URL: databaseUrl,
      PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
      PLATFORM_DELIVERY_TIMEOUT_MS: '2000',
      PLATFORM_WORKER_POLL_MS: '200',
      PLATFORM_LOG_LEVEL: 'warn',
      ...env,
    }),
  );
  after(() => worker.stop('SIGKILL'));
  return worker.child;
}

describe('nothing lost', () => {
  test('the worker killed with SIGKILL half-way: a new worker delivers everything, without waiting out its leases', {
    timeout: 240_000,
  }, async () => {
    // Leases of 4 minutes (4 × the delivery time-out): the scenario's minute for every delivery to arrive
    // and settle is met only if the new worker finds the dead one's leases and hands them back.
    const long = { PLATFORM_DELIVERY_TIMEOUT_MS: '60000' };
    await scenario(async ({ workers, databaseUrl }) => {
      workers[0]?.kill('SIGKILL');
      workers.push(startWorker(databaseUrl, long));
    }, long);
  });

  test('two workers share the work: every delivery is attempted exactly once while leases hold', {
    timeout: 240_000,
  }, async () => {
    const { received, attempts } = await scenario(async ({ workers, databaseUrl }) => {
      workers.push(startWorker(databaseUrl));
    });
    // scenario() checked that everything arrived; here, that nothing was sent twice.
    assert.equal(received, EVENTS * ENDPOINTS, 'no delivery reached its receiver twice');
    assert.equal(attempts, EVENTS * ENDPOINTS, 'one attempt recorded per delivery');
  });

  test('PostgreSQL restarted half-way: the worker reconnects and delivers everything', {
    timeout: 240_000,
  }, async () => {
    if (embedded) {
      // A real restart of the embedded server the whole test run uses.
      const dataDir = path.dirname(new URL(adminUrl()).searchParams.get('host') as string);
      await scenario(async () => {
        const attached = await openEmbeddedCluster(dataDir, () => {});
        await attached.stop();
        await new Promise((resolve) => setTimeout(resolve, 1000));
        await openEmbeddedCluster(dataDir, () => {});
      });
    } else {
      // A server we do not own: every connection of the service and worker is cut, as a restart does.
      const proxy = await startProxy(databaseAddress(adminUrl()));
      after(() => proxy.close());
      const throughProxy = (url: string) => {
        const parsed = new URL(url);
        parsed.hostname = '127.0.0.1';
        parsed.port = String(proxy.port);
        return parsed.toString();
      };
      await scenarioThroughProxy(throughProxy, async () => {
        await proxy.cut();
        await new Promise((resolve) => setTimeout(resolve, 1000));
        await proxy.restore();
      });
    }
  });
});

/** The same scenario with the worker connected through the proxy. */
async function scenarioThroughProxy(rewrite: (url: string) => string, outage: () => Promise<void>) {
  await scenario(async ({ workers, databaseUrl }) => {
    // Swap the direct worker for one behind the proxy, then cut the proxy.
    workers[0]?.kill('SIGTERM');
    workers.push(startWorker(rewrite(databaseUrl)));
    await new Promise((resolve) => setTimeout(resolve, 2000)); // running and delivering before the cut
    await outage();
  });
}
