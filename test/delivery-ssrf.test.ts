// The address policy at connection time: a name that looked public when the endpoint was created but
// resolves inward when the worker dials it is refused, and so is a private address dialled directly.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, test } from 'node:test';
import { startService } from './helpers/app.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const receiver = await startReceiver();
const service = await startService({
  resolve: async () => ['93.184.216.34'], // at creation, the name looks public
  worker: { resolve: async () => ['127.0.0.1'], env: { PLATFORM_WORKER_POLL_MS: '100' } }, // when dialled, it is not
});
const tenant = await service.tenant();
let n = 0;
const request = (method: string, path: string, body?: unknown) =>
  service.request(method, path, { key: tenant.key, body, headers: { 'idempotency-key': `s-${++n}` } });
const firstAttempt = (eventId: string) =>
  eventually(async () => {
    const delivery = (await request('GET', `/core/v1/events/${eventId}`)).body.deliveries[0];
    return delivery?.attemptCount >= 1 && delivery;
  });

test('a public-looking name that resolves to 127.0.0.1 at delivery is refused at connect time', async () => {
  const created = await request('POST', '/core/v1/webhook-endpoints', {
    url: `https://receiver.example.com:${receiver.port}/hook`,
    eventTypes: ['*'],
  });
  assert.equal(created.status, 201, created.text);
  const eventId = (await request('POST', '/core/v1/events', { type: 'pay.payment.succeeded', data: {} })).body
    .eventId;
  const delivery = await firstAttempt(eventId);
  assert.match(
    delivery.lastError,
    /refused: receiver\.example\.com resolves to 127\.0\.0\.1 is a loopback address/,
  );
  assert.equal(delivery.state, 'pending', 'a refusal is a failed attempt, retried on the schedule');
  assert.equal(receiver.received.length, 0);
});

test('an IP literal stored under the permissive setting, delivered by a strict worker: no socket is opened', async () => {
  // The API allowed private targets when the endpoint was made; the worker does not: it must refuse the
  // address before connecting. A TCP listener counts every connection made to it.
  let connections = 0;
  const listener = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  after(() => listener.close());
  const port = (listener.address() as net.AddressInfo).port;
  const permissive = await startService({
    env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1' },
    worker: { env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '', PLATFORM_WORKER_POLL_MS: '100' } },
  });
  const owner = await permissive.tenant();
  for (const url of [
    `https://127.0.0.1:${port}/hook`,
    `http://127.0.0.1:${port}/hook`,
    `https://[::ffff:127.0.0.1]:${port}/`,
  ]) {
    const created = await permissive.request('POST', '/core/v1/webhook-endpoints', {
      key: owner.key,
      body: { url, eventTypes: ['*'] },
      headers: { 'idempotency-key': `literal-${url}` },
    });
    assert.equal(created.status, 201, created.text);
  }
  const published = await permissive.request('POST', '/core/v1/events', {
    key: owner.key,
    body: { type: 'pay.refund.created', data: {} },
    headers: { 'idempotency-key': 'literal-event' },
  });
  const deliveries = await eventually(async () => {
    const all = (
      await permissive.request('GET', `/core/v1/events/${published.body.eventId}`, { key: owner.key })
    ).body.deliveries;
    return all.length === 3 && all.every((d: { attemptCount: number }) => d.attemptCount >= 1) && all;
  });
  for (const delivery of deliveries)
    assert.match(delivery.lastError, /^refused: .*127\.0\.0\.1.* is a loopback address/);
  assert.equal(connections, 0, 'not one connection reached the listener');
});
