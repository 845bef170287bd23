// Destinations in the portal, in Chromium against the real service: the list names each by its type and
// where it sends, a polling destination's screen shows its feed, a broker's shows its log in the broker's
// words; a broker's destination and a feed added through the portal's form, a missing field refused beside
// it; in English and French, at 390 and 1280 px, with axe and no sideways page.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { en } from '../web/portal/src/i18n/en.ts';
import { fr } from '../web/portal/src/i18n/fr.ts';
import { startService } from './helpers/app.ts';
import { RABBITMQ_URL, REDIS_URL, rabbitmqQueue, redisStream } from './helpers/brokers.ts';
import { accessibilityViolations, screenshot, startBrowser } from './helpers/browser.ts';
import { eventually } from './helpers/receiver.ts';

const service = await startService({
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100' },
  worker: true,
});
const operator = await service.operator();
const browser = await startBrowser();
let n = 0;
const idem = () => ({ 'idempotency-key': `portal-destinations-${++n}` });

/** A project in English and French: its calls to the API with its key. */
async function project() {
  const tenant = await service.tenant();
  await service.request('PATCH', `/admin/v1/projects/${tenant.projectId}`, {
    key: operator.key,
    headers: { ...idem(), 'content-type': 'application/merge-patch+json' },
    body: { languages: ['en', 'fr'] },
  });
  return (method: string, path: string, body?: unknown) =>
    service.request(method, path, { key: tenant.key, headers: idem(), body });
}

describe('destinations in the portal', () => {
  test('listed by type and place; a feed and a broker’s log on their screens, in both languages', async () => {
    const api = await project();
    const redis = await redisStream();
    const feed = (
      await api('POST', '/core/v1/destinations', { type: 'polling', target: {}, eventTypes: ['*'] })
    ).body.id as string;
    const stream = await api('POST', '/core/v1/destinations', {
      type: 'redis',
      target: { url: REDIS_URL, stream: redis.stream },
      eventTypes: ['*'],
      name: 'Orders stream',
    });
    assert.equal(stream.status, 201, stream.text);
    await api('POST', '/core/v1/events', { type: 'pay.payment.succeeded', data: { amount: 1 } });
    await eventually(async () => (await redis.entries()).length === 1);
    for (const [language, words] of [
      ['en', en],
      ['fr', fr],
    ] as const) {
      for (const width of [390, 1280]) {
        const minted = await api('POST', '/core/v1/portal-sessions', { language });
        const page = await browser.newPage({ viewport: { width, height: 900 } });
        await page.goto(minted.body.url);
        await page.getByRole('link', { name: 'Orders stream' }).waitFor();
        await page.getByText(`${words['destination.redis']} · ${redis.stream} · ${REDIS_URL}`).waitFor();
        const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
        assert.ok(scrollWidth <= width, `the list is ${scrollWidth} px wide at ${width}`);
        assert.deepEqual(await accessibilityViolations(page), [], 'axe on the list');
        await screenshot(page, `destinations-${width}-${language}`);
        await page.getByRole('link', { name: words['destination.polling'] }).click();
        await page.getByRole('heading', { level: 2, name: words['feed.title'] }).waitFor();
        await page.locator('ul.feed li a', { hasText: 'pay.payment.succeeded' }).waitFor();
        assert.deepEqual(await accessibilityViolations(page), [], 'axe on the feed');
        await screenshot(page, `destination-feed-${width}-${language}`);
        await page.goto(`${service.baseUrl}/portal/`);
        await page.getByRole('link', { name: 'Orders stream' }).click();
        await page.locator('table.log tbody tr[data-state="delivered"]').first().waitFor();
        await page.close();
      }
    }
    assert.ok(feed);
  });

  test('the form adds a RabbitMQ destination and a feed; a field the broker needs is asked for beside it', async () => {
    const api = await project();
    const mq = await rabbitmqQueue();
    for (const [language, words, width] of [
      ['en', en, 390],
      ['fr', fr, 1280],
    ] as const) {
      const minted = await api('POST', '/core/v1/portal-sessions', { language });
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      await page.goto(minted.body.url);
      await page.getByRole('button', { name: words['create.title'] }).click();
      await page.getByLabel(words['create.kind']).selectOption('redis');
      await page.getByLabel(words['create.target.url']).fill(REDIS_URL);
      await page.getByRole('button', { name: words['create.submit'] }).click();
      // Left empty: said by the form, in the portal's language, before anything is sent.
      const stream = page.getByLabel(words['create.target.stream']);
      assert.equal(await page.locator('#target-stream-error').textContent(), words['create.target.missing']);
      assert.equal(await stream.getAttribute('aria-invalid'), 'true');
      assert.deepEqual(await accessibilityViolations(page), [], 'axe on the form with a broker’s fields');
      const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
      assert.ok(scrollWidth <= width, `the form is ${scrollWidth} px wide at ${width}`);
      await screenshot(page, `destination-form-${width}-${language}`);
      // Refused by the API (a URL that is not Redis's): said beside the URL.
      await stream.fill('orders');
      await page.getByLabel(words['create.target.url']).fill('http://127.0.0.1:6379');
      await page.getByRole('button', { name: words['create.submit'] }).click();
      await page.locator('#target-url-error').waitFor();
      assert.equal(await page.locator('#target-stream-error').count(), 0);

      await page.getByLabel(words['create.kind']).selectOption('rabbitmq');
      await page.getByLabel(words['create.target.url']).fill(RABBITMQ_URL);
      await page.getByLabel(words['create.target.exchange']).fill(mq.exchange);
      await page.getByLabel(words['create.target.routingKey']).fill('pay');
      await page.getByRole('button', { name: words['create.submit'] }).click();
      // The destination's screen: its secret once, and where it sends with the password hidden.
      await page.getByRole('heading', { name: words['secret.title'] }).waitFor();
      const place = `${words['destination.rabbitmq']} · ${mq.exchange} → pay · amqp://guest:***@127.0.0.1:5672`;
      await page.getByText(place).first().waitFor();
      await page.goto(`${service.baseUrl}/portal/`);
      await page.getByRole('button', { name: words['create.title'] }).click();
      await page.getByLabel(words['create.kind']).selectOption('polling');
      await page.getByText(words['create.pollingHint']).waitFor();
      await page.getByRole('button', { name: words['create.submit'] }).click();
      await page.getByRole('heading', { level: 2, name: words['feed.title'] }).waitFor();
      await page.close();
    }
    const listed = (await api('GET', '/core/v1/destinations')).body.data as {
      type: string;
      target: unknown;
    }[];
    assert.deepEqual(listed.map((d) => d.type).sort(), ['polling', 'polling', 'rabbitmq', 'rabbitmq']);
    await api('POST', '/core/v1/events', { type: 'pay.payment.succeeded', data: { amount: 1 } });
    await eventually(async () => (await mq.take()).length > 0, 10_000, 'the form’s destination delivers');
  });
});
