// Rules that need deliveries to stay pending: a service with no worker running, then one that starts.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import type { Database, Db } from '../src/db/database.ts';
import { DeliveryWorker } from '../src/delivery/worker.ts';
import { stateOf } from '../src/delivery-store/state.ts';
import { expectProblem, startService, type TestResponse } from './helpers/app.ts';
import { answerWith, eventually, startReceiver } from './helpers/receiver.ts';

const env = { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100' };
const service = await startService({ env });
// A queue of its own, for the test that counts a worker's claims: the other tests leave retries due in
// theirs (operational events to endpoints of every type whose receivers are gone), and a worker sending
// them holds an endpoint below its high-water mark, which makes every run's end worth a claim.
const quiet = await startService({ env });

/** A new project of the quiet service, and a POST with its key. */
async function quietTenant() {
  const own = await quiet.tenant();
  const post = (path: string, body: unknown) =>
    quiet.request('POST', path, { key: own.key, body, headers: idem() });
  return { post };
}

/** Publishes `count` events of `type`, thirty at a time. */
async function publishMany(
  post: (path: string, body: unknown) => Promise<TestResponse>,
  type: string,
  count: number,
) {
  for (let i = 0; i < count; i += 30) {
    const published = await Promise.all(
      Array.from({ length: Math.min(30, count - i) }, (_, j) =>
        post('/core/v1/events', { type, data: { j } }),
      ),
    );
    assert.deepEqual(new Set(published.map((r) => r.status)), new Set([202]));
  }
}

/**
 * Runs a worker on the quiet service that only its own runs wake (no poll, no notification) until `until`
 * resolves, and gives the number of deliveries each of its claims found due.
 */
async function countingWorker(until: () => Promise<void>): Promise<number[]> {
  const walks: number[] = [];
  const db = quiet.context.db;
  const counting: Database = {
    ...db,
    transaction: (fn, settings) =>
      db.transaction((tx, hooks) => {
        const query = (async (statement: string | { name?: string }, values?: unknown[]) => {
          const result = await (tx.query as (s: unknown, v?: unknown[]) => ReturnType<Db['query']>)(
            statement,
            values,
          );
          if (typeof statement === 'object' && statement.name === 'delivery-due')
            walks.push(result.rowCount ?? 0);
          return result;
        }) as Db['query'];
        return fn({ query }, hooks);
      }, settings),
  };
  const worker = new DeliveryWorker({
    ...quiet.context,
    db: counting,
    signals: new EventEmitter<{ deliveries: [] }>(),
    config: {
      ...quiet.context.config,
      webhookAllowPrivate: true,
      workerConcurrency: 8,
      workerPollMs: 60_000,
    },
  });
  await worker.start();
  try {
    await until();
  } finally {
    await worker.stop();
  }
  return walks;
}
const tenant = await service.tenant();
let n = 0;
const idem = () => ({ 'idempotency-key': `r-${++n}` });
const request = (method: string, path: string, body?: unknown) =>
  service.request(method, path, { key: tenant.key, body, headers: idem() });

/** A worker with four sends in flight at most, one of them to an endpoint: it holds what it claims beyond. */
async function narrowWorker() {
  const worker = new DeliveryWorker({
    ...service.context,
    config: { ...service.context.config, webhookAllowPrivate: true, workerConcurrency: 4, workerPollMs: 100 },
  });
  await worker.start();
  return worker;
}

describe('delivery rules while nothing is delivering', () => {
  test('replay is refused with 400 while the first dispatch is under way, accepted after it', async () => {
    const receiver = await startReceiver();
    await request('POST', '/core/v1/webhook-endpoints', { url: receiver.url, eventTypes: ['*'] });
    const eventId = (await request('POST', '/core/v1/events', { type: 'pay.payment.succeeded', data: {} }))
      .body.eventId;
    expectProblem(
      await request('POST', `/core/v1/events/${eventId}/replay`),
      400,
      'EVENT_DISPATCH_IN_PROGRESS',
    );

    const health = (await request('GET', '/api/health')).body;
    assert.equal(health.queue, 'up');

    const worker = new DeliveryWorker({
      ...service.context,
      config: { ...service.context.config, webhookAllowPrivate: true, workerPollMs: 100 },
    });
    await worker.start();
    try {
      await receiver.waitFor(1);
      await eventually(
        async () =>
          (await request('GET', `/core/v1/events/${eventId}`)).body.deliveries[0].state === 'delivered',
      );
      assert.equal((await request('POST', `/core/v1/events/${eventId}/replay`)).status, 200);
      await receiver.waitFor(2);
      await eventually(
        async () => (await request('GET', '/api/health')).body.queue === 'idle',
        10_000,
        'queue idle',
      );
    } finally {
      await worker.stop();
    }
  });

  test('deleting an endpoint cancels its pending deliveries and keeps their history', async () => {
    const receiver = await startReceiver();
    const { id } = (
      await request('POST', '/core/v1/webhook-endpoints', { url: receiver.url, eventTypes: ['*'] })
    ).body;
    const eventId = (await request('POST', '/core/v1/events', { type: 'pay.refund.created', data: {} })).body
      .eventId;
    assert.equal((await request('DELETE', `/core/v1/webhook-endpoints/${id}`)).status, 204);
    const deliveries = (await request('GET', `/core/v1/events/${eventId}`)).body.deliveries;
    const toDeleted = deliveries.find((d: { endpointId: string }) => d.endpointId === id);
    assert.equal(toDeleted.state, 'cancelled');
    assert.equal(toDeleted.lastError, 'endpoint deleted');
  });

  test('health is degraded when deliveries are due and no worker has reported in for 60 s', async () => {
    const receiver = await startReceiver();
    await request('POST', '/core/v1/webhook-endpoints', { url: receiver.url, eventTypes: ['*'] });
    await request('POST', '/core/v1/events', { type: 'pay.payment.succeeded', data: {} });
    await service.db.query(`update worker_heartbeats set seen_at = now() - interval '61 seconds'`);
    // Health's queue figures are at most a second old.
    const health = await eventually(async () => {
      const body = (await request('GET', '/api/health')).body;
      return body.status === 'degraded' && body;
    });
    assert.equal(health.queue, 'up');
    assert.deepEqual(health.reasons, [
      { code: 'no_worker', message: 'deliveries are due and no delivery worker has reported in for 60 s' },
    ]);
    await service.db.query(`insert into worker_heartbeats values ('w', 'h', 1, now(), now())`);
    await eventually(async () => (await request('GET', '/api/health')).body.status === 'ok');
  });

  test('410 Gone: nothing more is sent to the endpoint, not even what a worker already holds', async () => {
    const gone = await startReceiver((_received, _index, response) => {
      setTimeout(() => response.writeHead(410).end(), 300); // long enough for the worker to hold the rest
    });
    const endpointId = (
      await request('POST', '/core/v1/webhook-endpoints', { url: gone.url, eventTypes: ['pay.gone.thing'] })
    ).body.id;
    const events: string[] = [];
    for (let i = 0; i < 6; i++)
      events.push(
        (await request('POST', '/core/v1/events', { type: 'pay.gone.thing', data: { i } })).body.eventId,
      );

    // One send at a time to an endpoint (a quarter of four): the worker holds the others it claimed.
    const worker = await narrowWorker();
    try {
      const states = await eventually(async () => {
        const { rows } = await service.db.query(
          `select ${stateOf('d')} as state, count(*)::int as n from deliveries d where endpoint_id = $1 group by 1 order by 1`,
          [endpointId],
        );
        return rows.every((row) => row.state !== 'pending') && rows;
      });
      assert.deepEqual(states, [
        { state: 'cancelled', n: 5 },
        { state: 'dead', n: 1 },
      ]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(gone.received.length, 1, 'one request reached the endpoint that answered 410');

      // A delivery queued for the disabled endpoint all the same (a test event) is cancelled, not sent.
      const test = await request('POST', `/core/v1/webhook-endpoints/${endpointId}/test`);
      assert.equal(test.status, 200, test.text);
      const delivery = await eventually(async () => {
        const found = (await request('GET', `/core/v1/events/${test.body.eventId}`)).body.deliveries[0];
        return found?.state !== 'pending' && found;
      });
      assert.equal(delivery.state, 'cancelled');
      assert.equal(delivery.lastError, 'endpoint disabled');
      assert.equal(gone.received.length, 1);
    } finally {
      await worker.stop();
    }
  });

  test('deleting an endpoint while a worker holds its deliveries: they go unsent, the attempt in flight is recorded', async () => {
    const slow = await startReceiver((_received, _index, response) => {
      setTimeout(() => response.writeHead(204).end(), 400);
    });
    const endpointId = (
      await request('POST', '/core/v1/webhook-endpoints', { url: slow.url, eventTypes: ['pay.slow.thing'] })
    ).body.id;
    for (let i = 0; i < 6; i++)
      await request('POST', '/core/v1/events', { type: 'pay.slow.thing', data: { i } });
    const worker = await narrowWorker();
    try {
      await slow.waitFor(1);
      // The worker learns of the deletion from PostgreSQL's notification, as every worker process does.
      assert.equal((await request('DELETE', `/core/v1/webhook-endpoints/${endpointId}`)).status, 204);
      const rows = await eventually(async () => {
        const { rows } = await service.db.query(
          `select state, attempts, last_error from deliveries where endpoint_id = $1 order by attempts desc`,
          [endpointId],
        );
        return rows[0]?.attempts === 1 && rows;
      });
      assert.deepEqual(
        rows.map((row) => [row.state, row.attempts, row.last_error]),
        [['cancelled', 1, 'endpoint deleted'], ...Array(5).fill(['cancelled', 0, 'endpoint deleted'])],
      );
      const { rows: attempts } = await service.db.query(
        `select a.status_code from delivery_attempts a join deliveries d on d.id = a.delivery_id where d.endpoint_id = $1`,
        [endpointId],
      );
      assert.deepEqual(attempts, [{ status_code: 204 }], 'the attempt made is on record');
      await new Promise((resolve) => setTimeout(resolve, 600));
      assert.equal(slow.received.length, 1, 'what the worker held was not sent');
    } finally {
      await worker.stop();
    }
  });

  test('an endpoint that does not answer does not fill the worker: the others are sent meanwhile', async () => {
    // The stalled endpoint's deliveries are due first, more of them than the worker holds (16): one claim
    // in due order would take nothing else, and the worker would have no room until its send timed out.
    const stalled: ServerResponse[] = [];
    const dead = await startReceiver((_received, _index, response) => stalled.push(response));
    const live = await startReceiver();
    const deadId = (
      await request('POST', '/core/v1/webhook-endpoints', {
        url: dead.url,
        eventTypes: ['pay.stalled.thing'],
      })
    ).body.id;
    await request('POST', '/core/v1/webhook-endpoints', { url: live.url, eventTypes: ['pay.prompt.thing'] });
    for (let i = 0; i < 24; i++)
      await request('POST', '/core/v1/events', { type: 'pay.stalled.thing', data: { i } });
    await request('POST', '/core/v1/events', { type: 'pay.prompt.thing', data: {} });
    const worker = await narrowWorker();
    try {
      // Well within the send timeout (15 s): nothing of the stalled endpoint has been answered yet.
      await live.waitFor(1, 10_000);
      assert.equal(dead.received.length, 1, 'one send at a time to the stalled endpoint');
      assert.equal(stalled.length, 1);
    } finally {
      await request('DELETE', `/core/v1/webhook-endpoints/${deadId}`);
      for (const response of stalled) response.writeHead(204).end();
      dead.answer(answerWith(204));
      await worker.stop();
    }
  });

  test("a worker holding its one endpoint's high-water mark does not walk the queue for others nobody announced", async () => {
    // 180 due to one endpoint that answers at once, the only deliveries in the queue, and a worker that
    // only its own runs wake (no poll, no notification). Woken by a run ending while it claims, a worker
    // claimed again once its claim had filled the endpoint's high-water mark: that claim left the endpoint out and
    // walked the whole queue for nothing.
    const receiver = await startReceiver();
    const { post } = await quietTenant();
    await post('/core/v1/webhook-endpoints', { url: receiver.url, eventTypes: ['pay.many.thing'] });
    await publishMany(post, 'pay.many.thing', 180);
    const walks = await countingWorker(() => receiver.waitFor(180, 20_000));
    const empty = walks.filter((rows) => rows === 0).length;
    assert.ok(walks.length > 5, `claims: ${walks.join(' ')}`);
    // One to learn that nothing else is due (the first claim after the start), one at the end, and one
    // for each notification of the publishes above still on its way when the worker started listening (a
    // wake-up from outside: new deliveries may have come), at most two (wake.ts keeps one in flight and one
    // more). The code before this test gave 12 of 26.
    assert.ok(empty <= 4, `${empty} of ${walks.length} claims found nothing: ${walks.join(' ')}`);
  });

  test('nor while another endpoint it holds hangs with nothing more due', async () => {
    // The same 180, and beside them one delivery to an endpoint that does not answer until the end: held
    // below its high-water mark, with nothing more of it due. The claims as before: a hanging endpoint is no reason
    // to walk past the busy one's backlog at every run's end.
    const stalled: ServerResponse[] = [];
    const hanging = await startReceiver((_received, _index, response) => stalled.push(response));
    const receiver = await startReceiver();
    const { post } = await quietTenant();
    await post('/core/v1/webhook-endpoints', { url: hanging.url, eventTypes: ['pay.slow.thing'] });
    await post('/core/v1/webhook-endpoints', { url: receiver.url, eventTypes: ['pay.many.thing'] });
    await publishMany(post, 'pay.slow.thing', 1);
    await publishMany(post, 'pay.many.thing', 180);
    const walks = await countingWorker(async () => {
      await receiver.waitFor(180, 20_000);
      for (const response of stalled) response.writeHead(204).end();
      await hanging.waitFor(1);
    });
    const empty = walks.filter((rows) => rows === 0).length;
    assert.ok(walks.length > 5, `claims: ${walks.join(' ')}`);
    assert.ok(empty <= 4, `${empty} of ${walks.length} claims found nothing: ${walks.join(' ')}`);
  });
});
