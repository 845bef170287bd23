// Rules that need deliveries to stay pending: a service with no worker running, then one that starts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DeliveryWorker } from '../src/delivery/worker.ts';
import { expectProblem, startService } from './helpers/app.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const env = { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100' };
const service = await startService({ env });
const tenant = await service.tenant();
let n = 0;
const idem = () => ({ 'idempotency-key': `r-${++n}` });
const request = (method: string, path: string, body?: unknown) =>
  service.request(method, path, { key: tenant.key, body, headers: idem() });

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
    const health = (await request('GET', '/api/health')).body;
    assert.equal(health.queue, 'up');
    assert.equal(health.status, 'degraded');
    await service.db.query(`insert into worker_heartbeats values ('w', 'h', 1, now(), now())`);
    assert.equal((await request('GET', '/api/health')).body.status, 'ok');
  });
});
