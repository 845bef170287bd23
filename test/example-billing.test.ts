// examples/billing as the process of its own it is, against a real service: usage of three products
// (recorded with their own capability keys) read from the change feed, a period closed into an invoice
// priced from prices.json, delivered to the project's endpoint and verified there; a late record in the
// closed period adjusting it; the invoices read through the gateway; erasure by pull, invoices kept. Then
// Billing's ledger as its outbox: what it recorded while the platform refused its publishes goes out once.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { Capability } from '@platform-core/capability';
import { Webhook } from 'standardwebhooks';
import { closePeriod, publishOwed, syncFeed } from '../examples/billing/src/billing.ts';
import { openLedger } from '../examples/billing/src/ledger.ts';
import { readPrices } from '../examples/billing/src/prices.ts';
import { startService } from './helpers/app.ts';
import { startExample } from './helpers/examples.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const service = await startService({
  worker: true,
  env: {
    PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
    PLATFORM_WORKER_POLL_MS: '100',
    PLATFORM_RATE_LIMIT_PER_SECOND: '0',
  },
});
const product = (name: string, metric: string) =>
  service.capability(name, {
    manifest: {
      description: `The ${name} of this test`,
      scopes: [],
      metrics: [{ name: metric, description: metric }],
      eventTypes: [],
      providers: [],
      erasure: null,
      gateway: null,
    },
  });
const products = {
  notify: await product('notify', 'messages_sent'),
  ai: await product('ai', 'tokens'),
  pay: await product('pay', 'payments'),
};
const billing = await service.capability('billing', { upstream: 'http://127.0.0.1:1' });
const operator = await service.operator();
const granted = await service.request('PATCH', '/admin/v1/capabilities/billing', {
  key: operator.key,
  body: { grants: ['projects:read', 'usage:read'] },
  headers: { 'idempotency-key': 'grants' },
});
assert.equal(granted.status, 200, granted.text);

const data = path.join(await mkdtemp(path.join(tmpdir(), 'billing-')), 'billing.db');
const env: Record<string, string> = {
  ...process.env,
  PLATFORM_URL: service.baseUrl,
  BILLING_CAPABILITY_KEY: billing.key,
  BILLING_SIGNING_SECRETS: billing.signingSecret,
  BILLING_DATA: data,
  BILLING_FEED_POLL_MS: '200',
  BILLING_ERASURE_POLL_MS: '200',
  PORT: '0',
};
const { url: listening } = await startExample('billing', env);
// The operator points the gateway at where Billing listens (its port was chosen at start).
const pointed = await service.request('PATCH', '/admin/v1/capabilities/billing', {
  key: operator.key,
  body: { upstream: listening },
  headers: { 'idempotency-key': 'upstream' },
});
assert.equal(pointed.status, 200, pointed.text);

const tenant = await service.tenant(['webhooks:write', 'billing:read', 'billing:manage', 'subjects:erase']);
let n = 0;
const record = (name: keyof typeof products, metric: string, value: number) =>
  service.request('POST', '/capability/v1/usage', {
    key: products[name].key,
    body: { records: [{ id: `u-${++n}`, projectId: tenant.projectId, metric, value }] },
  });
const today = new Date().toISOString().slice(0, 10);
const close = () =>
  new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      ['examples/billing/src/close.ts', today, today],
      { env },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
    ),
  );

describe('examples/billing', () => {
  test('a period invoiced from the feed, delivered to the project’s endpoint; a late record adjusts it', async () => {
    const hooks = await startReceiver();
    const endpoint = await service.request('POST', '/core/v1/webhook-endpoints', {
      key: tenant.key,
      body: { url: hooks.url, eventTypes: ['billing.*'] },
      headers: { 'idempotency-key': 'billing-endpoint' },
    });
    assert.equal(endpoint.status, 201, endpoint.text);
    const contact = await service.request('PUT', '/billing/v1/contact', {
      key: tenant.key,
      body: { email: 'Ada@Example.com' },
      headers: { 'idempotency-key': 'contact' },
    });
    assert.equal(contact.status, 200, contact.text);
    for (const [name, metric, value] of [
      ['notify', 'messages_sent', 10],
      ['ai', 'tokens', 1000],
      ['pay', 'payments', 2],
    ] as const)
      assert.equal((await record(name, metric, value)).status, 200);

    const closed = JSON.parse(
      (await close())
        .trim()
        .split('\n')
        .find((l) => l.includes(tenant.projectId)) ?? '{}',
    );
    // 10 messages at 1, 1,000 tokens at 0.02, 2 payments at 25 (prices.json), in minor units.
    assert.equal(closed.totalMinor, 80, JSON.stringify(closed));
    const verify = (at: number) => {
      const received = hooks.received[at];
      assert.ok(received);
      return new Webhook(endpoint.body.secret).verify(
        received.body,
        received.headers as Record<string, string>,
      ) as {
        type: string;
        data: { invoiceId: string; totalMinor: number; deltaMinor?: number; lines: { metric: string }[] };
      };
    };
    await hooks.waitFor(1);
    const created = verify(0);
    assert.equal(created.type, 'billing.invoice.created');
    assert.equal(created.data.invoiceId, closed.invoiceId);
    assert.deepEqual(
      created.data.lines.map((l) => l.metric),
      ['ai/tokens', 'notify/messages_sent', 'pay/payments'],
    );

    assert.equal((await record('notify', 'messages_sent', 5)).status, 200, 'late: the period is closed');
    // The adjustment that bills the 15 messages. (The invoice's own event counts as the project's
    // core/events_published, priced too: in a period still running it may adjust the invoice as well.)
    const adjusted = await eventually(async () => {
      for (let at = 1; at < hooks.received.length; at++) {
        const event = verify(at);
        const messages = (event.data.lines as { metric: string; quantity: number }[]).find(
          (l) => l.metric === 'notify/messages_sent',
        );
        if (event.type === 'billing.invoice.adjusted' && messages?.quantity === 15) return event;
      }
      return undefined;
    }, 15_000);
    assert.equal(adjusted.data.invoiceId, closed.invoiceId);
    assert.ok(
      adjusted.data.totalMinor >= 85 && (adjusted.data.deltaMinor ?? 0) >= 5,
      JSON.stringify(adjusted.data),
    );

    const again = JSON.parse(
      (await close())
        .trim()
        .split('\n')
        .find((l) => l.includes(tenant.projectId)) ?? '{}',
    );
    assert.equal(again.invoiceId, closed.invoiceId, 'a period is invoiced once');
    const invoices = await service.request('GET', '/billing/v1/invoices', { key: tenant.key });
    assert.equal(invoices.status, 200, invoices.text);
    assert.deepEqual(
      invoices.body.data.map((i: { id: string; recipient: string }) => [i.id, i.recipient]),
      [[closed.invoiceId, 'ada@example.com']],
    );
  });

  test('erasure by pull: the invoice kept, the person on it anonymized, counted', async () => {
    const erased = await service.request('POST', '/core/v1/subjects/erase', {
      key: tenant.key,
      body: { subject: { type: 'email', value: 'ada@example.com' } },
      headers: { 'idempotency-key': 'erase-ada' },
    });
    assert.equal(erased.status, 200, erased.text);
    const answered = erased.body.capabilities.find((c: { capability: string }) => c.capability === 'billing');
    assert.equal(answered?.erased, 2, 'the invoice’s recipient and the project’s contact');
    const invoices = await service.request('GET', '/billing/v1/invoices', { key: tenant.key });
    assert.equal(invoices.body.data.length, 1, 'kept');
    assert.equal(invoices.body.data[0].recipient, null);
  });

  test('an invoice and an adjustment whose publishes failed go out when the platform answers, each once', async () => {
    const project = await service.tenant(['webhooks:read']);
    const ledger = openLedger(path.join(path.dirname(data), 'outbox.db'));
    after(() => ledger.close());
    const prices = readPrices(new URL('../examples/billing/prices.json', import.meta.url));
    let refusing = true;
    const platform = new Capability({
      apiKey: billing.key,
      baseUrl: service.baseUrl,
      maxRetries: 0,
      fetch: (input, init) =>
        refusing && String(input).endsWith('/capability/v1/events')
          ? Promise.reject(new TypeError('fetch failed'))
          : fetch(input, init),
    });
    /** The project's events of this type, each read whole. */
    const published = async (type: string) => {
      const page = await service.request('GET', `/core/v1/events?type=${type}`, { key: project.key });
      assert.equal(page.status, 200, page.text);
      return Promise.all(
        (page.body.data as { id: string }[]).map(async ({ id }) => {
          const event = await service.request('GET', `/core/v1/events/${id}`, { key: project.key });
          return event.body as { data: { totalMinor: number; deltaMinor?: number } };
        }),
      );
    };
    const recordFor = (value: number) =>
      service.request('POST', '/capability/v1/usage', {
        key: products.notify.key,
        body: {
          records: [{ id: `outbox-${++n}`, projectId: project.projectId, metric: 'messages_sent', value }],
        },
      });

    assert.equal((await recordFor(10)).status, 200);
    await eventually(async () => {
      await syncFeed(platform, ledger, prices);
      return (
        ledger.quantities(project.projectId, today, today).get('notify/messages_sent') === 10 || undefined
      );
    });
    await assert.rejects(closePeriod(platform, ledger, prices, today, today), /fetch failed|no answer/i);
    const owed = ledger.unpublished().invoices.filter((i) => i.projectId === project.projectId);
    assert.equal(owed.length, 1, 'the invoice is recorded, owed to the project');

    assert.equal((await recordFor(5)).status, 200, 'late: the period is closed');
    await eventually(async () => {
      await syncFeed(platform, ledger, prices).catch(() => undefined); // its publish is refused
      return ledger.unpublished().adjustments.some((a) => a.projectId === project.projectId) || undefined;
    });
    assert.deepEqual(
      [await published('billing.invoice.created'), await published('billing.invoice.adjusted')],
      [[], []],
    );

    refusing = false;
    await publishOwed(platform, ledger);
    assert.deepEqual(ledger.unpublished(), { invoices: [], adjustments: [] });
    const [invoice] = await published('billing.invoice.created');
    const [adjustment] = await published('billing.invoice.adjusted');
    assert.equal(invoice?.data.totalMinor, 10);
    assert.deepEqual([adjustment?.data.totalMinor, adjustment?.data.deltaMinor], [15, 5]);

    // Accepted, but the mark was lost (a crash between the two): published again, still one event each.
    const file = new DatabaseSync(path.join(path.dirname(data), 'outbox.db'));
    file.exec('update invoices set published_at = null; update adjustments set published_at = null');
    file.close();
    await publishOwed(platform, ledger);
    assert.equal((await published('billing.invoice.created')).length, 1);
    assert.equal((await published('billing.invoice.adjusted')).length, 1);
  });
});
