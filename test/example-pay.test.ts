// examples/pay as the process of its own it is, plugged into a real service through HTTP, with a card
// processor on loopback that counts its charges and signs its webhooks: a charge retried with its
// idempotency key is answered from the record and charged once; a declined card is a 402 and
// pay.payment.failed; the processor's own webhook becomes pay.payment.settled at the project's endpoint,
// verified there; the processor stopped opens pay/processor in health, and it recovers; usage counts
// pay/payments and pay/amount_minor; an erasure anonymizes the person's payments and answers their count.
import assert from 'node:assert/strict';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { startService } from './helpers/app.ts';
import { freePort, startExample } from './helpers/examples.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';
import { countOf } from './helpers/usage.ts';

const PROCESSOR_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
let processorUp = true;
let charges = 0;
let payUrl = '';
/** The processor's webhook to Pay, signed with the secret they share (as Standard Webhooks sign). */
async function settle(chargeId: string) {
  const payload = JSON.stringify({ type: 'charge.settled', data: { id: chargeId } });
  const id = `evt_${randomUUID()}`;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const key = Buffer.from(PROCESSOR_SECRET.slice('whsec_'.length), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${payload}`).digest('base64');
  return fetch(`${payUrl}/processor/webhooks`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': `v1,${signature}`,
    },
    body: payload,
  });
}
const lastCharge: string[] = [];
const processor = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => {
    body += chunk;
  });
  request.on('end', () => {
    if (!processorUp) return response.writeHead(503).end();
    charges++;
    const { card } = JSON.parse(body) as { card: string };
    const id = `ch_${charges}`;
    lastCharge.push(id);
    const declined = card.endsWith('0002');
    response
      .writeHead(declined ? 402 : 201, { 'content-type': 'application/json' })
      .end(
        JSON.stringify(
          declined ? { id, status: 'declined', reason: 'card_declined' } : { id, status: 'approved' },
        ),
      );
  });
});
await new Promise<void>((resolve) => processor.listen(0, '127.0.0.1', resolve));
after(() => processor.close());

const service = await startService({
  worker: true,
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100' },
});
const port = await freePort();
payUrl = `http://127.0.0.1:${port}`;
const pay = await service.capability('pay', { upstream: payUrl, erasureUrl: `${payUrl}/erasure` });
await startExample('pay', {
  PLATFORM_URL: service.baseUrl,
  PORT: String(port),
  PAY_CAPABILITY_KEY: pay.key,
  PAY_SIGNING_SECRETS: pay.signingSecret,
  PAY_PROCESSOR_URL: `http://127.0.0.1:${(processor.address() as AddressInfo).port}`,
  PAY_PROCESSOR_SECRET: PROCESSOR_SECRET,
  PAY_DATA: path.join(await mkdtemp(path.join(tmpdir(), 'pay-')), 'pay.db'),
  PAY_BREAKER_REPORT_MS: '200',
  PAY_BREAKER_RESET_MS: '4000',
  PAY_INSTANCE: 'pay-1',
});
await service.context.directory.refresh();

const tenant = await service.tenant([
  'pay:charge',
  'pay:read',
  'subjects:erase',
  'webhooks:write',
  'usage:read',
]);
const charge = (body: object, idempotencyKey: string = randomUUID()) =>
  service.request('POST', '/pay/v1/payments', {
    key: tenant.key,
    body,
    headers: { 'idempotency-key': idempotencyKey },
  });
const card = (last4: string) => `424242424242${last4}`;
let adasPayment = '';

describe('examples/pay', () => {
  test('a charge retried with its idempotency key is answered from the record and charged once', async () => {
    const order = {
      amount: 4200,
      currency: 'eur',
      card: card('4242'),
      email: 'Ada@Example.com',
      name: 'Ada',
    };
    const before = charges;
    const first = await charge(order, 'order-1');
    assert.equal(first.status, 201, first.text);
    adasPayment = first.body.id;
    const again = await charge(order, 'order-1');
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);
    assert.equal(charges, before + 1, 'the processor charged the card once');
    const read = await service.request('GET', `/pay/v1/payments/${first.body.id}`, { key: tenant.key });
    assert.equal(read.body.amount, 4200);
    const declined = await charge({ ...order, card: card('0002') });
    assert.equal(declined.status, 402, declined.text);
    assert.equal(declined.body.reason, 'card_declined');
  });

  test('its events reach the project: succeeded, failed, and settled from the processor’s own webhook', async () => {
    const hooks = await startReceiver();
    const endpoint = await service.request('POST', '/core/v1/webhook-endpoints', {
      key: tenant.key,
      body: { url: hooks.url, eventTypes: ['pay.*'] },
      headers: { 'idempotency-key': 'pay-endpoint' },
    });
    assert.equal(endpoint.status, 201, endpoint.text);
    const made = await charge({
      amount: 990,
      currency: 'usd',
      card: card('1111'),
      email: 'grace@example.com',
    });
    assert.equal(made.status, 201, made.text);
    assert.equal((await charge({ amount: 990, currency: 'usd', card: card('0002') })).status, 402);
    const forged = await fetch(`${payUrl}/processor/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'x',
        'webhook-timestamp': '1',
        'webhook-signature': 'v1,AAAA',
      },
      body: '{}',
    });
    assert.equal(forged.status, 401, 'an unsigned webhook is refused');
    assert.equal((await settle(lastCharge.at(-2) as string)).status, 200);
    assert.equal(
      (await settle(lastCharge.at(-2) as string)).status,
      200,
      'a repeated webhook changes nothing',
    );
    await hooks.waitFor(3);
    await new Promise((resolve) => setTimeout(resolve, 300)); // a fourth would have arrived by now
    const events = hooks.received.map(
      (r) =>
        new Webhook(endpoint.body.secret).verify(r.body, r.headers as Record<string, string>) as {
          type: string;
          data: { paymentId: string };
        },
    );
    assert.deepEqual(events.map((e) => e.type).sort(), [
      'pay.payment.failed',
      'pay.payment.settled',
      'pay.payment.succeeded',
    ]);
    assert.equal(events.find((e) => e.type === 'pay.payment.settled')?.data.paymentId, made.body.id);
    const read = await service.request('GET', `/pay/v1/payments/${made.body.id}`, { key: tenant.key });
    assert.equal(read.body.status, 'settled');
  });

  test('the processor down: pay/processor opens in health, and recovers', async () => {
    const health = async () => (await service.request('GET', '/api/health', { key: tenant.key })).body;
    await eventually(
      async () => (await health()).breakers.some((b: { provider: string }) => b.provider === 'pay/processor'),
      10_000,
    );
    processorUp = false;
    for (let i = 0; ; i++) {
      const failed = await charge({ amount: 100, currency: 'eur', card: card('4242') });
      assert.equal(failed.status, 503, failed.text);
      if (failed.body.error === 'the processor is unavailable') break;
      assert.ok(i < 20, 'the breaker opens');
    }
    const degraded = await eventually(async () => {
      const body = await health();
      return body.status === 'degraded' && body;
    }, 10_000);
    assert.deepEqual(degraded.breakers, [{ provider: 'pay/processor', state: 'open' }]);
    processorUp = true;
    await eventually(
      async () => (await charge({ amount: 100, currency: 'eur', card: card('4242') })).status === 201,
      10_000,
      'a charge once the breaker half-opens',
    );
    await eventually(async () => (await health()).status === 'ok', 10_000, 'health ok again');
  });

  test('usage: payments counted by the gateway, their amount by Pay; an erasure anonymizes and counts', async () => {
    const counted = await eventually(async () => {
      const usage = await service.request('GET', '/core/v1/usage', { key: tenant.key });
      const of = (metric: string) => countOf(usage.body.data, 'pay', metric);
      return of('amount_minor') === 4200 + 990 + 100 && of('payments') === 3;
    }, 15_000);
    assert.ok(counted);
    const erased = await service.request('POST', '/core/v1/subjects/erase', {
      key: tenant.key,
      body: { subject: { type: 'email', value: 'ada@example.com' } },
      headers: { 'idempotency-key': 'erase-ada' },
    });
    assert.equal(erased.status, 200, erased.text);
    const payErased = erased.body.capabilities.find((c: { capability: string }) => c.capability === 'pay');
    assert.equal(payErased?.erased, 2, 'her charge and her declined card, anonymized');
    const kept = await service.request('GET', `/pay/v1/payments/${adasPayment}`, { key: tenant.key });
    assert.deepEqual(
      [kept.status, kept.body.amount, kept.body.currency],
      [200, 4200, 'eur'],
      'what the law keeps',
    );
  });
});
