// Destinations beyond HTTPS (contract 0.4), against the machine's real RabbitMQ, Redis and NATS JetStream:
// each type delivered and checked by an independent Standard Webhooks verifier (the payload byte for byte,
// the headers in the transport's own), the broker's answer in the log, a refused message retried then
// dead with the broker's reason, the polling feed read from a cursor, a PATCH of a target, pause,
// ordering and rate for every type, and a broker that never answers holding none but its own deliveries.
// What the routes answer and the address policy: destinations-routes.
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { runMaintenance } from '../src/process/maintenance.ts';
import { expectProblem, startService, type Tenant } from './helpers/app.ts';
import {
  NATS_URL,
  natsStream,
  RABBITMQ_URL,
  REDIS_URL,
  rabbitmqQueue,
  redisStream,
} from './helpers/brokers.ts';
import { eventually } from './helpers/receiver.ts';

const service = await startService({
  env: {
    PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
    PLATFORM_WORKER_POLL_MS: '100',
    PLATFORM_RETRY_SCHEDULE: '0,0',
  },
  worker: true,
});
let n = 0;
const idem = () => ({ 'idempotency-key': `destinations-${++n}` });
const call = (who: Tenant, method: string, path: string, body?: unknown) =>
  service.request(method, path, {
    key: who.key,
    body,
    headers: { ...idem(), ...(method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {}) },
  });

interface Created {
  id: string;
  secret: string;
  type: string;
  target: Record<string, unknown>;
}

async function destination(who: Tenant, type: string, target: Record<string, unknown>, extra = {}) {
  const response = await call(who, 'POST', '/core/v1/destinations', {
    type,
    target,
    eventTypes: ['pay.*'],
    ...extra,
  });
  assert.equal(response.status, 201, response.text);
  return response.body as Created;
}

async function publish(who: Tenant, amount: number) {
  const response = await call(who, 'POST', '/core/v1/events', {
    type: 'pay.payment.succeeded',
    data: { amount },
  });
  assert.equal(response.status, 202, response.text);
  return response.body.eventId as string;
}

type Attempt = {
  succeeded: boolean;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
};
type Delivery = { state: string; eventId: string; attempts: Attempt[] };
const deliveries = async (who: Tenant, id: string) =>
  (await call(who, 'GET', `/core/v1/destinations/${id}/deliveries`)).body.data as Delivery[];

/** Checks a consumed message as a webhook receiver would, with the destination's secret. */
function verified(secret: string, message: { body: string; headers: Record<string, string> }) {
  const headers = {
    'webhook-id': message.headers['webhook-id'] as string,
    'webhook-timestamp': message.headers['webhook-timestamp'] as string,
    'webhook-signature': message.headers['webhook-signature'] as string,
  };
  return new Webhook(secret).verify(message.body, headers) as {
    id: string;
    type: string;
    data: { amount: number };
  };
}

describe('destinations on real brokers', () => {
  test('RabbitMQ: confirmed and routed, verified as a webhook; the password never shown', async () => {
    const tenant = await service.tenant();
    const mq = await rabbitmqQueue();
    const created = await destination(tenant, 'rabbitmq', {
      url: RABBITMQ_URL,
      exchange: mq.exchange,
      routingKey: 'pay',
    });
    assert.equal(created.type, 'rabbitmq');
    assert.deepEqual(created.target, {
      url: 'amqp://guest:***@127.0.0.1:5672',
      exchange: mq.exchange,
      routingKey: 'pay',
    });
    const eventId = await publish(tenant, 4200);
    await eventually(async () => (await deliveries(tenant, created.id))[0]?.state === 'delivered');
    const [message, ...rest] = await mq.take();
    assert.equal(rest.length, 0);
    assert.ok(message);
    const payload = verified(created.secret, message);
    assert.equal(payload.id, eventId);
    assert.equal(payload.data.amount, 4200);
    assert.equal(message.messageId, eventId);
    assert.equal(message.headers['x-platform-event-type'], 'pay.payment.succeeded');
    const [delivery] = await deliveries(tenant, created.id);
    assert.equal(delivery?.attempts[0]?.responseBody, 'confirmed by the broker');
    const got = await call(tenant, 'GET', `/core/v1/destinations/${created.id}`);
    assert.equal(JSON.stringify(got.body).includes('guest:guest'), false);
    const row = await service.db.query(
      'select url, target::text, target_secret_sealed from webhook_endpoints where id = $1',
      [created.id],
    );
    assert.equal(JSON.stringify(row.rows[0]).includes('guest:guest'), false, 'the password sealed at rest');
    assert.ok(row.rows[0]?.target_secret_sealed);
  });

  test('Redis: XADD answered with its entry, the fields verified as a webhook', async () => {
    const tenant = await service.tenant();
    const redis = await redisStream();
    const created = await destination(tenant, 'redis', {
      url: REDIS_URL,
      stream: redis.stream,
      maxLen: 1000,
    });
    const eventId = await publish(tenant, 7);
    await eventually(async () => (await deliveries(tenant, created.id))[0]?.state === 'delivered');
    const [entry] = await redis.entries();
    assert.ok(entry);
    assert.equal(verified(created.secret, entry).id, eventId);
    assert.equal(entry.headers['x-platform-event-type'], 'pay.payment.succeeded');
    const [delivery] = await deliveries(tenant, created.id);
    assert.equal(delivery?.attempts[0]?.responseBody, `XADD ${entry.id}`);
  });

  test('NATS JetStream: acknowledged by the stream, Nats-Msg-Id the webhook-id, verified as a webhook', async () => {
    const tenant = await service.tenant();
    const nats = await natsStream();
    const created = await destination(tenant, 'nats', { url: NATS_URL, subject: nats.subject });
    const eventId = await publish(tenant, 9);
    await eventually(async () => (await deliveries(tenant, created.id))[0]?.state === 'delivered');
    const [message] = await nats.messages();
    assert.ok(message);
    assert.equal(verified(created.secret, message).id, eventId);
    assert.equal(message.headers['nats-msg-id'], eventId);
    const [delivery] = await deliveries(tenant, created.id);
    assert.match(delivery?.attempts[0]?.responseBody ?? '', /^stream platform_test_\w+ seq 1$/);
  });

  test('a refused message is retried on the schedule, then dead, the broker’s reason in the log', async () => {
    const tenant = await service.tenant();
    const mq = await rabbitmqQueue();
    const nats = await natsStream();
    const refused = [
      [
        await destination(tenant, 'rabbitmq', {
          url: RABBITMQ_URL,
          exchange: 'no-such-exchange',
          routingKey: 'pay',
        }),
        /NOT_FOUND - no exchange 'no-such-exchange'/,
      ],
      [
        await destination(tenant, 'rabbitmq', {
          url: RABBITMQ_URL,
          exchange: mq.exchange,
          routingKey: 'nobody',
        }),
        /returned: NO_ROUTE \(no queue takes routing key "nobody"\)/,
      ],
      [
        await destination(tenant, 'redis', { url: REDIS_URL, stream: 'no-such-stream' }),
        /no stream: "no-such-stream" does not exist/,
      ],
      [await destination(tenant, 'nats', { url: NATS_URL, subject: 'nobody.listens' }), /no stream/],
      [
        await destination(tenant, 'rabbitmq', {
          url: 'amqp://guest:guest@127.0.0.1:1',
          exchange: mq.exchange,
          routingKey: 'pay',
        }),
        /connection refused|ECONNREFUSED/,
      ],
    ] as const;
    void nats;
    await publish(tenant, 1);
    for (const [created, reason] of refused) {
      await eventually(async () => (await deliveries(tenant, created.id))[0]?.state === 'dead', 30_000);
      const [delivery] = await deliveries(tenant, created.id);
      assert.equal(delivery?.attempts.length, 3, `${created.type}: retried twice on the schedule`);
      for (const attempt of delivery?.attempts ?? []) {
        assert.equal(attempt.succeeded, false);
        assert.match(attempt.error ?? '', reason);
      }
    }
  });

  test('polling: delivered into the feed, read from a cursor the consumer keeps', async () => {
    const tenant = await service.tenant();
    const created = await destination(tenant, 'polling', {});
    assert.deepEqual(created.target, {});
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await publish(tenant, i));
    await eventually(
      async () =>
        (await deliveries(tenant, created.id)).every((d) => d.state === 'delivered') &&
        (await deliveries(tenant, created.id)).length === 5,
    );
    const page = async (query: string) =>
      (await call(tenant, 'GET', `/core/v1/destinations/${created.id}/messages${query}`)).body as {
        data: { eventId: string; type: string; payload: { id: string; data: { amount: number } } }[];
        nextCursor: string;
      };
    await eventually(async () => (await page('?limit=10')).data.length === 5); // every append visible
    const first = await page('?limit=3');
    assert.equal(first.data.length, 3);
    const second = await page(`?limit=3&cursor=${first.nextCursor}`);
    assert.equal(second.data.length, 2);
    assert.deepEqual([...first.data, ...second.data].map((m) => m.eventId).sort(), [...ids].sort());
    for (const message of [...first.data, ...second.data]) assert.equal(message.payload.id, message.eventId);
    const empty = await page(`?cursor=${second.nextCursor}`);
    assert.deepEqual(
      empty,
      { data: [], nextCursor: second.nextCursor },
      'an empty page answers the cursor given',
    );
    expectProblem(
      await call(tenant, 'GET', `/core/v1/destinations/${created.id}/messages?cursor=bm9wZQ`),
      400,
      'VALIDATION_FAILED',
    );
    const [delivery] = await deliveries(tenant, created.id);
    assert.match(delivery?.attempts[0]?.responseBody ?? '', /^appended to the feed \(#\d+\)$/);
    // Kept as long as the history is: maintenance forgets a message past the horizon.
    const old = first.data[0]?.eventId;
    await service.db.query(
      `update destination_messages set event_created_at = now() - interval '400 days' where event_id = $1`,
      [old],
    );
    await runMaintenance(service.context);
    const kept = await page('?limit=10');
    assert.deepEqual(kept.data.map((m) => m.eventId).sort(), ids.filter((id) => id !== old).sort());
  });

  test('PATCH: a target merges; the password stays unless a new url is given', async () => {
    const tenant = await service.tenant();
    const mq = await rabbitmqQueue();
    const created = await destination(tenant, 'rabbitmq', {
      url: RABBITMQ_URL,
      exchange: 'elsewhere',
      routingKey: 'pay',
    });
    const patched = await call(tenant, 'PATCH', `/core/v1/destinations/${created.id}`, {
      target: { exchange: mq.exchange },
      name: 'Ledger queue',
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.target, {
      url: 'amqp://guest:***@127.0.0.1:5672',
      exchange: mq.exchange,
      routingKey: 'pay',
    });
    assert.equal(patched.body.name, 'Ledger queue');
    await publish(tenant, 3);
    await eventually(async () => (await deliveries(tenant, created.id))[0]?.state === 'delivered');
    assert.equal((await mq.take()).length, 1, 'the kept password still connects');
  });

  test('a new URL opens a new connection; the old one’s end never takes the new one down', async () => {
    const tenant = await service.tenant();
    const redis = await redisStream();
    const created = await destination(tenant, 'redis', { url: REDIS_URL, stream: redis.stream });
    await publish(tenant, 1);
    await eventually(async () => (await deliveries(tenant, created.id))[0]?.state === 'delivered');
    const moved = await call(tenant, 'PATCH', `/core/v1/destinations/${created.id}`, {
      target: { url: 'redis://localhost:6379' },
    });
    assert.equal(moved.status, 200, moved.text);
    for (let amount = 2; amount <= 4; amount++) {
      await publish(tenant, amount);
      await eventually(async () =>
        (await deliveries(tenant, created.id)).every((d) => d.state === 'delivered'),
      );
    }
    const all = await deliveries(tenant, created.id);
    assert.equal(all.length, 4);
    for (const delivery of all) assert.equal(delivery.attempts.length, 1, JSON.stringify(delivery.attempts));
    assert.equal((await redis.entries()).length, 4);
  });

  test('pause, ordering and rate hold for every type: held while paused, then in publish order at the rate', async () => {
    const tenant = await service.tenant();
    const mq = await rabbitmqQueue();
    const redis = await redisStream();
    const nats = await natsStream();
    const targets = [
      ['rabbitmq', { url: RABBITMQ_URL, exchange: mq.exchange, routingKey: 'pay' }],
      ['redis', { url: REDIS_URL, stream: redis.stream }],
      ['nats', { url: NATS_URL, subject: nats.subject }],
      ['polling', {}],
    ] as const;
    const made: Created[] = [];
    for (const [type, target] of targets) {
      const created = await destination(tenant, type, target, {});
      const steered = await call(tenant, 'PATCH', `/core/v1/destinations/${created.id}`, {
        ordering: 'endpoint',
        rateLimitPerSecond: 5,
      });
      assert.equal(steered.status, 200, steered.text);
      assert.equal((await call(tenant, 'POST', `/core/v1/destinations/${created.id}/pause`)).status, 200);
      made.push(created);
    }
    for (let amount = 0; amount < 8; amount++) await publish(tenant, amount);
    for (const created of made) {
      const held = await deliveries(tenant, created.id);
      assert.equal(held.length, 8);
      assert.ok(
        held.every((d) => d.state === 'pending' && d.attempts.length === 0),
        `${created.type} held`,
      );
    }
    for (const created of made) await call(tenant, 'POST', `/core/v1/destinations/${created.id}/resume`);
    for (const created of made) {
      await eventually(
        async () => (await deliveries(tenant, created.id)).every((d) => d.state === 'delivered'),
        20_000,
      );
    }
    const amounts = (bodies: string[]) =>
      bodies.map((body) => (JSON.parse(body) as { data: { amount: number } }).data.amount);
    const inOrder = [0, 1, 2, 3, 4, 5, 6, 7];
    assert.deepEqual(amounts((await mq.take()).map((m) => m.body)), inOrder, 'rabbitmq in publish order');
    assert.deepEqual(amounts((await redis.entries()).map((e) => e.body)), inOrder, 'redis in publish order');
    assert.deepEqual(amounts((await nats.messages()).map((m) => m.body)), inOrder, 'nats in publish order');
    // The feed shows what every running transaction can see: the last appends may wait for one to end.
    type Polled = { payload: { data: { amount: number } } }[];
    const read = async () =>
      (await call(tenant, 'GET', `/core/v1/destinations/${made[3]?.id}/messages`)).body.data as Polled;
    await eventually(async () => (await read()).length === 8);
    const polled = await read();
    assert.deepEqual(
      polled.map((m) => m.payload.data.amount),
      inOrder,
      'the feed in publish order',
    );
    // At most 5 a second: any 6 attempts in a row to one destination span about a second or more.
    for (const created of made) {
      const started = (await deliveries(tenant, created.id))
        .flatMap((d) => d.attempts.map((a) => Date.parse((a as Attempt & { startedAt: string }).startedAt)))
        .sort((a, b) => a - b);
      for (let i = 0; i + 5 < started.length; i++) {
        const span = (started[i + 5] as number) - (started[i] as number);
        assert.ok(span >= 800, `${created.type}: 6 attempts within ${span} ms at 5 a second`);
      }
    }
  });

  test('a broker that never answers holds only its own deliveries: the others go out meanwhile', async () => {
    const tenant = await service.tenant();
    // A RabbitMQ that accepts the connection and then says nothing: each attempt there waits out the
    // delivery timeout (15 s), and nothing of it is recorded before then.
    const held: net.Socket[] = [];
    const silent = net.createServer((socket) => held.push(socket));
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    const { port } = silent.address() as net.AddressInfo;
    const stuck = await destination(tenant, 'rabbitmq', {
      url: `amqp://guest:guest@127.0.0.1:${port}`,
      exchange: 'x',
      routingKey: 'k',
    });
    const redis = await redisStream();
    const healthy = await destination(tenant, 'redis', { url: REDIS_URL, stream: redis.stream });
    for (let amount = 0; amount < 20; amount++) await publish(tenant, amount);
    await eventually(
      async () => (await redis.entries()).length === 20,
      10_000,
      'all 20 at the healthy broker',
    );
    // Recorded a moment after the broker has them (attempts are written in batches).
    const went = await eventually(async () => {
      const log = await deliveries(tenant, healthy.id);
      return log.every((d) => d.state === 'delivered') && log;
    });
    assert.ok(
      went.every((d) => d.attempts.length === 1),
      'each at its first attempt',
    );
    const waiting = await deliveries(tenant, stuck.id);
    assert.equal(waiting.length, 20);
    assert.ok(
      waiting.every((d) => d.state !== 'delivered' && d.attempts.length === 0),
      'the silent broker’s first attempts still under way',
    );
    // Its end: the connection closes, and its deliveries fail at once rather than at the timeout.
    silent.close();
    for (const socket of held) socket.destroy();
  });
});
