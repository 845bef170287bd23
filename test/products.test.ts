// The five products together (docs/products.md): Notify, AI, Pay and Billing as the processes of their
// own they are, on one real service. A project's day of messages, completions and a payment is invoiced
// by Billing from the usage change feed, the invoice delivered to the project's endpoint and verified; a
// message sent after the period was closed adjusts it; an erasure is answered by all four, each with its
// count.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { startService } from './helpers/app.ts';
import { freePort, startExample } from './helpers/examples.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const service = await startService({
  worker: true,
  env: {
    PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
    PLATFORM_WORKER_POLL_MS: '100',
    PLATFORM_RATE_LIMIT_PER_SECOND: '0',
  },
});
const operator = await service.operator();
const data = await mkdtemp(path.join(tmpdir(), 'products-'));

/** Registers a product as an operator does, and starts it with its key and secret on a port of its own. */
async function product(name: string, env: (port: number) => Record<string, string>, erasure = true) {
  const port = await freePort();
  const upstream = `http://127.0.0.1:${port}`;
  const capability = await service.capability(name, {
    upstream,
    ...(erasure ? { erasureUrl: `${upstream}/erasure` } : {}),
  });
  const prefix = name.toUpperCase();
  const settings = {
    PLATFORM_URL: service.baseUrl,
    PORT: String(port),
    [`${prefix}_CAPABILITY_KEY`]: capability.key,
    [`${prefix}_SIGNING_SECRETS`]: capability.signingSecret,
    ...env(port),
  };
  await startExample(name, settings);
  return settings;
}

await product('notify', () => ({ NOTIFY_DATA: path.join(data, 'notify.db') }));
await product('ai', () => ({ AI_ERASURE_POLL_MS: '200' }), false);
await product('pay', () => ({ PAY_DATA: path.join(data, 'pay.db') }));
const billing = await product(
  'billing',
  () => ({
    BILLING_DATA: path.join(data, 'billing.db'),
    BILLING_FEED_POLL_MS: '200',
    BILLING_ERASURE_POLL_MS: '200',
  }),
  false,
);
// What only an operator gives: Billing reads every project and its usage.
const granted = await service.request('PATCH', '/admin/v1/capabilities/billing', {
  key: operator.key,
  body: { grants: ['projects:read', 'usage:read'] },
  headers: { 'idempotency-key': 'grants' },
});
assert.equal(granted.status, 200, granted.text);
await service.context.directory.refresh();

const tenant = await service.tenant([
  'notify:send',
  'ai:complete',
  'pay:charge',
  'billing:read',
  'billing:manage',
  'webhooks:write',
  'subjects:erase',
]);
let n = 0;
const call = (method: string, route: string, body?: unknown) =>
  service.request(method, route, {
    key: tenant.key,
    body,
    headers: method === 'GET' ? {} : { 'idempotency-key': `p-${++n}` },
  });
const today = new Date().toISOString().slice(0, 10);

describe('the five products on one platform', () => {
  test('a day of Notify, AI and Pay invoiced by Billing, delivered and verified; a late message adjusts it', async () => {
    const hooks = await startReceiver();
    const endpoint = await call('POST', '/core/v1/webhook-endpoints', {
      url: hooks.url,
      eventTypes: ['billing.*'],
    });
    assert.equal(endpoint.status, 201, endpoint.text);
    assert.equal((await call('PUT', '/billing/v1/contact', { email: 'ada@example.com' })).status, 200);
    for (const subject of ['One', 'Two'])
      assert.equal(
        (await call('POST', '/notify/v1/messages', { to: 'ada@example.com', subject, text: 'Hi' })).status,
        201,
      );
    const completion = await call('POST', '/ai/v1/completions', {
      prompt: 'one two three',
      maxTokens: 50,
      user: 'u-ada',
    });
    assert.equal(completion.status, 200, completion.text);
    const paid = await call('POST', '/pay/v1/payments', {
      amount: 4200,
      currency: 'eur',
      card: '4242424242424242',
      email: 'ada@example.com',
    });
    assert.equal(paid.status, 201, paid.text);
    await service.context.meter.flush(); // the events the products published, counted by Core

    const closed = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['examples/billing/src/close.ts', today, today],
        { env: { ...process.env, ...billing } },
        (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    const invoice = JSON.parse(
      closed
        .trim()
        .split('\n')
        .find((line) => line.includes(tenant.projectId)) ?? '{}',
    );
    await hooks.waitFor(1);
    const verify = (at: number) =>
      new Webhook(endpoint.body.secret).verify(
        hooks.received[at]?.body as string,
        hooks.received[at]?.headers as Record<string, string>,
      ) as {
        type: string;
        data: {
          invoiceId: string;
          totalMinor: number;
          deltaMinor?: number;
          lines: { metric: string; quantity: number }[];
        };
      };
    const created = verify(0);
    assert.equal(created.type, 'billing.invoice.created');
    assert.equal(created.data.invoiceId, invoice.invoiceId);
    const quantities = Object.fromEntries(created.data.lines.map((l) => [l.metric, l.quantity]));
    assert.equal(quantities['notify/messages_sent'], 2);
    assert.equal(quantities['ai/tokens'], 6);
    assert.equal(quantities['pay/payments'], 1);

    // A message after the period was closed: late usage for it, an adjustment of 1 (one message at 1).
    assert.equal(
      (await call('POST', '/notify/v1/messages', { to: 'grace@example.com', subject: 'Late', text: 'Hi' }))
        .status,
      201,
    );
    // The adjustment that bills the third message (the invoice's own event, counted as the project's
    // core/events_published, may adjust it too).
    const adjusted = await eventually(async () => {
      for (let at = 1; at < hooks.received.length; at++) {
        const event = verify(at);
        const messages = event.data.lines.find((l) => l.metric === 'notify/messages_sent');
        if (event.type === 'billing.invoice.adjusted' && messages?.quantity === 3) return event;
      }
      return undefined;
    }, 15_000);
    assert.equal(adjusted.data.invoiceId, invoice.invoiceId);
    assert.ok((adjusted.data.deltaMinor ?? 0) >= 1, JSON.stringify(adjusted.data));
  });

  test('an erasure answered by all four, each with its count', async () => {
    const erased = await call('POST', '/core/v1/subjects/erase', {
      subject: { type: 'email', value: 'ada@example.com' },
    });
    assert.equal(erased.status, 200, erased.text);
    const counts = Object.fromEntries(
      erased.body.capabilities.map((c: { capability: string; erased: number }) => [c.capability, c.erased]),
    );
    assert.deepEqual(
      { notify: counts.notify, ai: counts.ai, pay: counts.pay, billing: counts.billing },
      { notify: 2, ai: 0, pay: 1, billing: 2 },
      JSON.stringify(erased.body),
    );
    assert.equal(erased.body.capabilities[0].capability, 'core');
  });
});
