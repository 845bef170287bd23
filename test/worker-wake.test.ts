// A worker in another process is woken by a NOTIFY that each writing request sends after its commit
// (src/delivery-store/wake.ts), not by one in its statement. Here the worker shares no in-process signal with
// the API and polls once a minute: only the notification can bring the deliveries out within seconds.
// So too with what a stopping worker held and never started: it hands them back and says so.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { after, describe, test } from 'node:test';
import { DeliveryWorker } from '../src/delivery/worker.ts';
import { DELIVERIES_CHANNEL } from '../src/delivery-store/channel.ts';
import { startService } from './helpers/app.ts';
import { type Answer, eventually, startReceiver } from './helpers/receiver.ts';

const service = await startService({ env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1' } });
const tenant = await service.tenant();
let n = 0;
const request = (method: string, path: string, body?: unknown) =>
  service.request(method, path, { key: tenant.key, body, headers: { 'idempotency-key': `w-${++n}` } });

let heard = 0;
const stopListening = await service.db.listen(DELIVERIES_CHANNEL, () => heard++);
after(() => stopListening());

/** A worker as if in another process: no in-process signal from the API, and a poll once a minute. */
async function workerElsewhere(config: Partial<typeof service.context.config> = {}) {
  const worker = new DeliveryWorker({
    ...service.context,
    signals: new EventEmitter<{ deliveries: [] }>(),
    config: { ...service.context.config, webhookAllowPrivate: true, workerPollMs: 60_000, ...config },
  });
  await worker.start();
  return worker;
}

/** A project of its own with one endpoint, at a receiver of its own, subscribed to `type`. */
async function subscribed(type: string, answer?: Answer) {
  const other = await service.tenant();
  const receiver = await startReceiver(answer);
  const endpoint = await service.request('POST', '/core/v1/webhook-endpoints', {
    key: other.key,
    body: { url: receiver.url, eventTypes: [type] },
    headers: { 'idempotency-key': `endpoint-${type}` },
  });
  assert.equal(endpoint.status, 201);
  return { other, receiver };
}

describe('waking the workers after a commit', () => {
  test('a worker that only the notification can wake sends each publish, test and replay at once', async () => {
    const receiver = await startReceiver();
    const endpoint = await request('POST', '/core/v1/webhook-endpoints', {
      url: receiver.url,
      eventTypes: ['pay.payment.succeeded'],
    });
    const worker = await workerElsewhere();
    try {
      const first = await request('POST', '/core/v1/events', { type: 'pay.payment.succeeded', data: {} });
      assert.equal(first.status, 202);
      await receiver.waitFor(1, 5_000); // the ordinary way: the first publish of its kind
      await request('POST', '/core/v1/events', { type: 'pay.payment.succeeded', data: { n: 2 } });
      await receiver.waitFor(2, 5_000); // a sole write
      await request('POST', `/core/v1/webhook-endpoints/${endpoint.body.id}/test`);
      await receiver.waitFor(3, 5_000);
      // A replay waits for the first dispatch's attempts to be recorded (they are written in batches).
      await eventually(
        async () =>
          (await request('GET', `/core/v1/events/${first.body.eventId}`)).body.deliveries[0].state ===
          'delivered',
      );
      assert.equal((await request('POST', `/core/v1/events/${first.body.eventId}/replay`)).status, 200);
      await receiver.waitFor(4, 5_000);
    } finally {
      await worker.stop();
    }
  });

  test('a notifier whose connection broke sends again on a new one', async () => {
    const { other, receiver } = await subscribed('pay.payment.failed');
    const key = (name: string) => ({ 'idempotency-key': `broken-${name}` });
    const worker = await workerElsewhere();
    try {
      const publish = (name: string) =>
        service.request('POST', '/core/v1/events', {
          key: other.key,
          body: { type: 'pay.payment.failed', data: { name } },
          headers: key(name),
        });
      assert.equal((await publish('before')).status, 202);
      await receiver.waitFor(1, 5_000);
      const cut = await service.db.query(
        `select pg_terminate_backend(pid) as cut from pg_stat_activity
          where application_name = 'platform-core notifier' and datname = current_database()`,
      );
      assert.equal(cut.rowCount, 1, 'the notifier has a connection of its own');
      assert.equal((await publish('after')).status, 202);
      await receiver.waitFor(2, 5_000);
    } finally {
      await worker.stop();
    }
  });

  test('concurrent publishes share notifications: at least one, never more than one each', async () => {
    const { other } = await subscribed('pay.refund.created');
    const before = heard;
    const published = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        service.request('POST', '/core/v1/events', {
          key: other.key,
          body: { type: 'pay.refund.created', data: { i } },
          headers: { 'idempotency-key': `c-${i}` },
        }),
      ),
    );
    for (const answer of published) assert.equal(answer.status, 202);
    await eventually(async () => heard > before, 5_000, 'a notification after the publishes');
    await new Promise((resolve) => setTimeout(resolve, 300)); // any later ones, for the upper bound
    const count = heard - before;
    assert.ok(count >= 1 && count <= 40, `${count} notifications for 40 publishes`);
  });

  test('what a stopping worker held and never sent, another worker sends at once', async () => {
    // The first send takes a second, so the stopping worker still holds the other, unstarted.
    const { other, receiver } = await subscribed('pay.payout.paid', (_, index, response) =>
      setTimeout(() => response.writeHead(204).end(), index === 0 ? 1000 : 0),
    );
    for (const i of [1, 2]) {
      const published = await service.request('POST', '/core/v1/events', {
        key: other.key,
        body: { type: 'pay.payout.paid', data: { i } },
        headers: { 'idempotency-key': `held-${i}` },
      });
      assert.equal(published.status, 202);
    }
    const workers: DeliveryWorker[] = [];
    try {
      // One send at a time, so one endpoint's claim takes two: one to send, one to wait (held.ts).
      const stopping = await workerElsewhere({ workerConcurrency: 1 });
      workers.push(stopping);
      const leased = async () => {
        const { rows } = await service.db.query<{ n: number }>(
          'select count(*)::int as n from delivery_queue where project_id = $1 and lease_holder = $2',
          [other.projectId, stopping.lockKey],
        );
        return rows[0]?.n;
      };
      await eventually(async () => (await leased()) === 2, 5_000, 'both leased by the stopping worker');
      workers.push(await workerElsewhere()); // finds nothing due, and polls once a minute
      await stopping.stop(); // after its one send in flight
      // Only the stopping worker's notification can bring the other to the second one now.
      await receiver.waitFor(2, 5_000);
    } finally {
      for (const worker of workers) await worker.stop();
    }
  });
});
