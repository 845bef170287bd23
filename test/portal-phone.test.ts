// The portal's defects found by trying it, each fixed and held here in Chromium: at phone width (390 px)
// nothing is squeezed a letter wide and the page does not scroll sideways; attempts carry their own
// numbers, newest first; an action retried after a lost answer repeats its idempotency key; a failed poll
// of the log says so instead of failing silently. English and French, 390 and 1280 px, screenshots saved.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { startService } from './helpers/app.ts';
import { accessibilityViolations, screenshot, startBrowser } from './helpers/browser.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const service = await startService({
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100' },
  worker: true,
});
const operator = await service.operator();
const browser = await startBrowser();
let n = 0;
const idem = () => ({ 'idempotency-key': `portal-phone-${++n}` });

// A project in both languages, an endpoint whose receiver fails the first attempt, and a delivery retried
// once by hand: two attempts, the newest a success.
const tenant = await service.tenant();
await service.request('PATCH', `/admin/v1/projects/${tenant.projectId}`, {
  key: operator.key,
  headers: { ...idem(), 'content-type': 'application/merge-patch+json' },
  body: { languages: ['en', 'fr'] },
});
const receiver = await startReceiver((_received, index, response) => {
  response.writeHead(index === 0 ? 500 : 204).end();
});
const endpoint = await service.request('POST', '/core/v1/webhook-endpoints', {
  key: tenant.key,
  headers: idem(),
  body: { url: `${receiver.url}/a-rather-long-path/that-would-squeeze-a-narrow-table`, eventTypes: ['*'] },
});
await service.request('POST', '/core/v1/events', {
  key: tenant.key,
  headers: idem(),
  body: { type: 'pay.payment.succeeded', data: { amount: 4200 } },
});
const deliveryId = await eventually(async () => {
  const log = await service.request('GET', `/core/v1/webhook-endpoints/${endpoint.body.id}/deliveries`, {
    key: tenant.key,
  });
  const [delivery] = log.body.data as { id: string; attemptCount: number }[];
  return delivery?.attemptCount === 1 && delivery.id;
});
const retried = await service.request('POST', `/core/v1/deliveries/${deliveryId}/retry`, {
  key: tenant.key,
  headers: idem(),
});
assert.equal(retried.status, 202, retried.text);
await receiver.waitFor(2);

async function open(width: number) {
  const minted = await service.request('POST', '/core/v1/portal-sessions', {
    key: tenant.key,
    headers: idem(),
    body: {},
  });
  const page = await browser.newPage({ viewport: { width, height: 844 } });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(minted.body.url);
  await page.getByRole('heading', { level: 1, name: 'Endpoints' }).waitFor();
  return { page, problems };
}

/** The page scrolls only downwards, and a button's label stays on one line. */
async function fitsWidth(page: Page, width: number, button: string) {
  const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
  const wide = await page.evaluate(
    `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > ${width} + 1).map((e) => e.tagName + '.' + e.className + ':' + getComputedStyle(e).display + '/' + getComputedStyle(e).overflowX + '/' + Math.round(e.getBoundingClientRect().width)).slice(0, 8).join(' ')`,
  );
  assert.ok(scrollWidth <= width, `the page is ${scrollWidth} px wide at ${width}: ${wide}`);
  const box = await page
    .getByRole('button', { name: new RegExp(`^${button}`) })
    .first()
    .boundingBox();
  assert.ok(
    box && box.height < 48 && box.width > box.height,
    `"${button}" on one line: ${JSON.stringify(box)}`,
  );
}

describe('the portal on a phone, and its defects', () => {
  test('390 px and 1280 px, English and French: nothing squeezed, no sideways page', async () => {
    for (const width of [390, 1280]) {
      const { page } = await open(width);
      await fitsWidth(page, width, 'Add an endpoint');
      await screenshot(page, `endpoints-${width}-en`);
      await page.getByLabel('Language').selectOption('fr');
      await page.getByRole('heading', { level: 1, name: 'Points de réception' }).waitFor();
      await fitsWidth(page, width, 'Ajouter un point de réception');
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshot(page, `endpoints-${width}-fr`);
      await page.close();
    }
  });

  test('attempts are numbered by their own number, newest first', async () => {
    const { page, problems } = await open(390);
    await page.getByRole('link', { name: /a-rather-long-path/ }).click();
    await page.getByRole('heading', { level: 2, name: 'Delivery log' }).waitFor();
    await page.locator('table.log summary').first().click();
    const numbers = await page
      .locator('ol.attempts li')
      .evaluateAll((items) => items.map((item) => Number(item.getAttribute('value'))));
    assert.deepEqual(numbers, [2, 1]);
    // Each attempt's request headers as sent, the signature redacted.
    await page.locator('ol.attempts li').first().getByText('Request headers as sent').click();
    await page.locator('ol.attempts li').first().getByText('webhook-signature: v1,***').waitFor();
    await fitsWidth(page, 390, 'Rotate secret');
    await screenshot(page, 'endpoint-390-en');
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('an action retried after its answer was lost sends the same idempotency key; a new one, a new key', async () => {
    const { page } = await open(1280);
    await page.getByRole('link', { name: /a-rather-long-path/ }).click();
    const sent: string[] = [];
    await page.route('**/rotate-secret', async (route) => {
      sent.push(route.request().headers()['idempotency-key'] ?? '');
      // The first reaches the service, but its answer is lost on the way back.
      if (sent.length === 1) {
        await route.fetch();
        return route.abort('connectionreset');
      }
      return route.continue();
    });
    const rotate = page.getByRole('button', { name: 'Rotate secret' });
    await rotate.click();
    await page.getByRole('alert').waitFor();
    await rotate.click();
    await page.getByTestId('secret').waitFor();
    await rotate.click();
    await eventually(async () => sent.length === 3);
    assert.equal(sent[1], sent[0], 'the retry repeats the action');
    assert.notEqual(sent[2], sent[1], 'the next rotation is a new action');
    const rotations = async () =>
      (
        await service.db.query(
          `select count(*)::int as n from audit_log where action = 'endpoint.secret_rotated' and target_id = $1`,
          [endpoint.body.id],
        )
      ).rows[0]?.n as number;
    // The audit is written after the commit: wait for the third click's entry.
    await eventually(async () => (await rotations()) >= 2, 5000).catch(() => {});
    assert.equal(await rotations(), 2, 'two rotations, not three');

    // A refusal is an answer (recorded under its key): the next click is a new attempt, not its replay.
    const tests: string[] = [];
    await page.route('**/test', (route) => {
      tests.push(route.request().headers()['idempotency-key'] ?? '');
      return tests.length === 1
        ? route.fulfill({
            status: 400,
            contentType: 'application/problem+json',
            body: JSON.stringify({ code: 'VALIDATION_FAILED', requestId: 'req-2', detail: 'refused' }),
          })
        : route.continue();
    });
    const sendTest = page.getByRole('button', { name: 'Send test event' });
    await sendTest.click();
    await page.getByRole('alert').filter({ hasText: 'VALIDATION_FAILED' }).waitFor();
    await sendTest.click();
    await page.getByText('Test event sent.').waitFor();
    assert.notEqual(tests[1], tests[0]);
    await page.close();
  });

  test('a failed poll of the log is shown, and clears when the next one succeeds', async () => {
    const { page, problems } = await open(1280);
    let failing = true;
    await page.route('**/deliveries?**', (route) =>
      failing
        ? route.fulfill({
            status: 503,
            contentType: 'application/problem+json',
            body: JSON.stringify({ code: 'SERVICE_UNAVAILABLE', requestId: 'req-1', detail: 'down' }),
          })
        : route.continue(),
    );
    await page.getByRole('link', { name: /a-rather-long-path/ }).click();
    await page.getByText(/down\. Something went wrong \(SERVICE_UNAVAILABLE\)/).waitFor();
    failing = false;
    await page.locator('table.log').waitFor();
    await eventually(async () => (await page.getByRole('alert').count()) === 0, 6000);
    assert.deepEqual(problems, [], 'no unhandled rejection');
    await page.close();
  });
});
