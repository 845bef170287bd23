// The address policy at connection time: a name that looked public when the endpoint was created but
// resolves inward when the worker dials it is refused, and so is a private address dialled directly.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { seal } from '../src/crypto.ts';
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

test('a private IP literal dialled directly is refused once connected, before anything is sent', async () => {
  // An endpoint stored before a policy change (creation would refuse it now): the worker checks again.
  const id = randomUUID();
  await service.db.query(
    `insert into webhook_endpoints (project_id, id, url, event_types, active_secret) values ($1, $2, $3, '{*}', $4)`,
    [
      tenant.projectId,
      id,
      `http://127.0.0.1:${receiver.port}/hook`,
      seal(service.context.keyring, Buffer.alloc(32, 1), `webhook-secret:${id}`),
    ],
  );
  const eventId = (await request('POST', '/core/v1/events', { type: 'pay.refund.created', data: {} })).body
    .eventId;
  const deliveries = await eventually(async () => {
    const all = (await request('GET', `/core/v1/events/${eventId}`)).body.deliveries;
    return all.every((d: { attemptCount: number }) => d.attemptCount >= 1) && all;
  });
  const direct = deliveries.find((d: { endpointId: string }) => d.endpointId === id);
  assert.match(direct.lastError, /refused at connect: 127\.0\.0\.1 is a loopback address/);
  assert.equal(receiver.received.length, 0);
});
