// An endpoint's test with {"eventType"}: an event of that type of the catalogue, its example as data,
// signed and sent to that endpoint only; a type without an example, or not in the catalogue, is a 400.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { expectProblem, startService } from './helpers/app.ts';
import { startReceiver } from './helpers/receiver.ts';

const service = await startService({
  worker: true,
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100' },
});
const tenant = await service.tenant();
let n = 0;
const api = (method: string, path: string, body?: unknown) =>
  service.request(method, path, { key: tenant.key, headers: { 'idempotency-key': `example-${++n}` }, body });

describe('sending an example of a type', () => {
  test('the type’s example, signed, to that endpoint only, whatever it subscribes to', async () => {
    await api('PUT', '/core/v1/event-types/pay.payment.succeeded', {
      description: 'A payment was captured',
      schema: { type: 'object', properties: { amount: { type: 'integer' } } },
      example: { amount: 4200, currency: 'EUR' },
    });
    const target = await startReceiver();
    const bystander = await startReceiver();
    const created = await api('POST', '/core/v1/webhook-endpoints', {
      url: target.url,
      eventTypes: ['shop.*'],
    });
    await api('POST', '/core/v1/webhook-endpoints', { url: bystander.url, eventTypes: ['*'] });
    const sent = await api('POST', `/core/v1/webhook-endpoints/${created.body.id}/test`, {
      eventType: 'pay.payment.succeeded',
    });
    assert.equal(sent.status, 200, sent.text);
    await target.waitFor(1);
    const received = target.received[0];
    const event = new Webhook(created.body.secret).verify(
      received?.body ?? '',
      received?.headers as Record<string, string>,
    ) as { type: string; data: unknown };
    assert.equal(event.type, 'pay.payment.succeeded');
    assert.deepEqual(event.data, { amount: 4200, currency: 'EUR' });
    // Kept as the event it is: of that type, with one delivery, of kind test.
    const read = await service.request('GET', `/core/v1/events/${sent.body.eventId}`, { key: tenant.key });
    assert.equal(read.body.type, 'pay.payment.succeeded');
    assert.deepEqual(
      read.body.deliveries.map((d: { kind: string }) => d.kind),
      ['test'],
    );
    assert.equal(bystander.received.length, 0);
  });

  test('a type without an example, or not in the catalogue, is a 400 naming /eventType', async () => {
    await api('PUT', '/core/v1/event-types/shop.order.placed', { description: 'An order was placed' });
    const target = await startReceiver();
    const created = await api('POST', '/core/v1/webhook-endpoints', { url: target.url, eventTypes: ['*'] });
    const test = (eventType: string) =>
      api('POST', `/core/v1/webhook-endpoints/${created.body.id}/test`, { eventType });
    const none = await test('shop.order.placed');
    expectProblem(none, 400, 'VALIDATION_FAILED');
    assert.match(none.body.errors[0].detail, /has no example/);
    assert.equal(none.body.errors[0].pointer, '/eventType');
    const unknown = await test('shop.order.lost');
    expectProblem(unknown, 400, 'VALIDATION_FAILED');
    assert.match(unknown.body.errors[0].detail, /no event type shop\.order\.lost/);
    expectProblem(await test('Not A Type'), 400, 'VALIDATION_FAILED');
    expectProblem(
      await api('POST', `/core/v1/webhook-endpoints/${created.body.id}/test`, { eventType: 'a.b', extra: 1 }),
      400,
      'VALIDATION_FAILED',
    );
  });
});
