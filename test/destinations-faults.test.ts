// Destinations keep the guarantees of webhooks through faults: 200 events to a RabbitMQ exchange, a Redis
// stream, a NATS JetStream subject and a polling feed reach every one of them at least once although the
// worker process is killed with SIGKILL half-way, although every broker is stopped half-way and started
// again (the machine's RabbitMQ, private Redis and NATS servers that keep their data on disk), and although
// PostgreSQL restarts half-way (the embedded server really restarted; a server we do not own cut off
// through a proxy, as a restart looks to its clients).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { openEmbeddedCluster } from '../src/db/embedded.ts';
import { stateOf } from '../src/delivery-store/state.ts';
import { spawnNode } from '../support/process.ts';
import { startService, TEST_ENCRYPTION_KEY, type Tenant, type TestService } from './helpers/app.ts';
import {
  natsStream,
  privateNats,
  privateRedis,
  RABBITMQ_URL,
  rabbitmqQueue,
  redisStream,
} from './helpers/brokers.ts';
import { adminUrl, databaseAddress } from './helpers/database.ts';
import { childEnv } from './helpers/process.ts';
import { startProxy } from './helpers/proxy.ts';
import { eventually } from './helpers/receiver.ts';

const EVENTS = 200;
const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
// Retries close together, so an outage of a few seconds costs a few attempts, never the last.
const SCHEDULE = '1,2,4,8,16,30,30,30';

function startWorker(databaseUrl: string) {
  const worker = spawnNode(
    MAIN,
    ['worker'],
    childEnv({
      DATABASE_URL: databaseUrl,
      PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
      PLATFORM_DELIVERY_TIMEOUT_MS: '2000',
      PLATFORM_WORKER_POLL_MS: '200',
      PLATFORM_RETRY_SCHEDULE: SCHEDULE,
      PLATFORM_LOG_LEVEL: 'warn',
    }),
  );
  after(() => worker.stop('SIGKILL'));
  return worker;
}

async function create(service: TestService, tenant: Tenant, type: string, target: Record<string, unknown>) {
  const response = await service.request('POST', '/core/v1/destinations', {
    key: tenant.key,
    body: { type, target, eventTypes: ['*'] },
    headers: { 'idempotency-key': `destination-${type}` },
  });
  assert.equal(response.status, 201, response.text);
  return response.body.id as string;
}

/** Every destination type with its consumer's count of distinct events received. */
interface Running {
  worker: ReturnType<typeof startWorker>;
  databaseUrl: string;
  redisServer: Awaited<ReturnType<typeof privateRedis>>;
  natsServer: Awaited<ReturnType<typeof privateNats>>;
}

/** How the worker reaches the database: directly, or through a proxy the scenario may cut. */
type Route = (databaseUrl: string) => Promise<string>;

async function scenario(interrupt: (running: Running) => Promise<void>, route: Route = async (url) => url) {
  const service = await startService({
    env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_RATE_LIMIT_PER_SECOND: '0' },
  });
  const tenant = await service.tenant();
  const redisServer = await privateRedis();
  const natsServer = await privateNats();
  const mq = await rabbitmqQueue();
  const redis = await redisStream(redisServer.url);
  const nats = await natsStream(natsServer.url);
  await create(service, tenant, 'rabbitmq', { url: RABBITMQ_URL, exchange: mq.exchange, routingKey: 'pay' });
  await create(service, tenant, 'redis', { url: redisServer.url, stream: redis.stream });
  await create(service, tenant, 'nats', { url: natsServer.url, subject: nats.subject });
  const feed = await create(service, tenant, 'polling', {});
  for (let i = 0; i < EVENTS; i += 25) {
    const responses = await Promise.all(
      Array.from({ length: 25 }, (_, j) =>
        service.request('POST', '/core/v1/events', {
          key: tenant.key,
          body: { type: 'pay.payment.succeeded', data: { n: i + j } },
          headers: { 'idempotency-key': `e-${i + j}` },
        }),
      ),
    );
    for (const response of responses) assert.equal(response.status, 202, response.text);
  }
  const fromRabbit = new Set<string>();
  // What each consumer has, read as a consumer would; a broker still coming back counts as nothing yet.
  const count = (read: () => Promise<number>) => read().catch(() => -1);
  const received = async () => ({
    rabbitmq: await count(async () => {
      for (const message of await mq.take()) fromRabbit.add(message.messageId);
      return fromRabbit.size;
    }),
    redis: await count(async () => new Set((await redis.entries()).map((e) => e.headers['webhook-id'])).size),
    nats: await count(async () => new Set((await nats.messages()).map((m) => m.headers['webhook-id'])).size),
    polling: await count(async () => {
      const { rows } = await service.db.query(
        'select count(distinct event_id)::int as n from destination_messages where endpoint_id = $1',
        [feed],
      );
      return rows[0]?.n as number;
    }),
  });
  const databaseUrl = service.context.config.databaseUrl as string;
  const worker = startWorker(await route(databaseUrl));
  await eventually(
    async () => Object.values(await received()).some((n) => n >= EVENTS / 4),
    60_000,
    'a quarter delivered',
  );
  await interrupt({ worker, databaseUrl, redisServer, natsServer });
  let last = await received();
  await eventually(
    async () => {
      last = await received();
      return Object.values(last).every((n) => n === EVENTS);
    },
    150_000,
    'every message at every destination',
  ).catch(() => assert.fail(`received ${JSON.stringify(last)} of ${EVENTS} each`));
  const states = await eventually(async () => {
    const { rows } = await service.db.query(
      `select ${stateOf('d')} as state, count(*)::int as n from deliveries d group by 1`,
    );
    return rows.length === 1 && rows;
  }, 60_000);
  assert.deepEqual(states, [{ state: 'delivered', n: EVENTS * 4 }], 'none pending, dead or stuck');
}

describe('destinations: nothing lost', () => {
  test('the worker killed with SIGKILL half-way: a new worker delivers everything to every broker', {
    timeout: 300_000,
  }, async () => {
    await scenario(async ({ worker, databaseUrl }) => {
      await worker.stop('SIGKILL');
      startWorker(databaseUrl);
    });
  });

  test('every broker stopped half-way and started again: everything delivered to each', {
    timeout: 300_000,
  }, async () => {
    after(() => execFileSync('rabbitmqctl', ['start_app'], { stdio: 'ignore' }));
    await scenario(async ({ redisServer, natsServer }) => {
      execFileSync('rabbitmqctl', ['stop_app'], { stdio: 'ignore' });
      await Promise.all([redisServer.stop(), natsServer.stop()]);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      execFileSync('rabbitmqctl', ['start_app'], { stdio: 'ignore' });
      await Promise.all([redisServer.start(), natsServer.start()]);
    });
  });

  test('PostgreSQL restarted half-way: the worker stays up and everything is delivered to each', {
    timeout: 300_000,
  }, async () => {
    const host = new URL(adminUrl()).searchParams.get('host');
    const dataDir = host?.startsWith('/') ? path.dirname(host) : undefined;
    let proxy: Awaited<ReturnType<typeof startProxy>> | undefined;
    const route: Route = async (url) => {
      if (dataDir) return url;
      proxy = await startProxy(databaseAddress(url));
      after(() => proxy?.close());
      return `postgresql://postgres@127.0.0.1:${proxy.port}${new URL(url).pathname}`;
    };
    await scenario(async ({ worker }) => {
      if (proxy) await proxy.cut();
      else await (await openEmbeddedCluster(dataDir as string, () => {})).stop();
      await new Promise((resolve) => setTimeout(resolve, 2000));
      if (proxy) await proxy.restore();
      else await openEmbeddedCluster(dataDir as string, () => {});
      assert.equal(worker.child.exitCode, null, `the worker stayed up:\n${worker.output()}`);
    }, route);
  });
});
