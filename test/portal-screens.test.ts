// The portal's screens on par with the webhook portals developers know, in Chromium against the real service
// and receivers on loopback: state badges (contrast held against a light and a dark project theme), the
// event-type catalogue, subscribing by picking types, the attempts chart, the next attempt and why a
// delivery waits, Retry, "send failed events again since…" with its count and the job's progress, editing
// an endpoint, and the project-wide event log with its filters. Every screen in English and French, at
// 390 and 1280 px, with axe and no sideways page; screenshots under test-results/portal/.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { contrast } from '../web/portal/src/colours.ts';
import { startService } from './helpers/app.ts';
import { accessibilityViolations, screenshot, startBrowser } from './helpers/browser.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const service = await startService({
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100', PLATFORM_RETRY_SCHEDULE: '0' },
  worker: true,
});
const operator = await service.operator();
const browser = await startBrowser();
let n = 0;
const idem = () => ({ 'idempotency-key': `portal-screens-${++n}` });

/** A project in English and French, in the given theme. */
async function project(theme: Record<string, string>) {
  const tenant = await service.tenant();
  const patched = await service.request('PATCH', `/admin/v1/projects/${tenant.projectId}`, {
    key: operator.key,
    headers: { ...idem(), 'content-type': 'application/merge-patch+json' },
    body: { languages: ['en', 'fr'], theme },
  });
  assert.equal(patched.status, 200, patched.text);
  return tenant;
}
const tenant = await project({ primary: '#1D4ED8' });
const api = (method: string, path: string, body?: unknown) =>
  service.request(method, path, { key: tenant.key, headers: idem(), body });

// The catalogue: a type of the project's, with its schema and example.
await api('PUT', '/core/v1/event-types/pay.payment.succeeded', {
  description: 'A payment was captured',
  schema: { type: 'object', required: ['amount'], properties: { amount: { type: 'integer' } } },
  example: { amount: 4200 },
});
// One endpoint that answers 204, one that fails until told otherwise, one paused.
const good = await startReceiver();
let failing = true;
const flaky = await startReceiver((_received, _index, response) =>
  response.writeHead(failing ? 500 : 204).end(),
);
const held = await startReceiver();
const create = async (url: string, eventTypes: string[]) =>
  (await api('POST', '/core/v1/webhook-endpoints', { url, eventTypes })).body.id as string;
const goodId = await create(`${good.url}/good`, ['pay.*']);
const flakyId = await create(`${flaky.url}/flaky`, ['*']);
const heldId = await create(`${held.url}/held`, ['*']);
await api('POST', `/core/v1/webhook-endpoints/${heldId}/pause`);
await api('POST', '/core/v1/events', { type: 'pay.payment.succeeded', data: { amount: 4200 } });
await api('POST', '/core/v1/events', { type: 'shop.order.placed', data: { order: 7 } });
const deliveries = async (id: string) =>
  (await api('GET', `/core/v1/webhook-endpoints/${id}/deliveries`)).body.data as {
    id: string;
    state: string;
    eventType: string;
  }[];
await eventually(async () => {
  const states = (await deliveries(flakyId)).map((d) => d.state);
  return states.length === 2 && states.every((state) => state === 'dead');
});

async function open(width: number, language: 'en' | 'fr', path = '/portal/') {
  const minted = await api('POST', '/core/v1/portal-sessions', { language });
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(minted.body.url);
  await page.locator('main h1').waitFor();
  if (path !== '/portal/') {
    await page.evaluate(
      `history.pushState(null, '', '${path}'); dispatchEvent(new PopStateEvent('popstate'))`,
    );
  }
  return { page, problems };
}

/** No sideways page, no serious or critical axe finding, and the screen saved. */
async function check(page: Page, name: string, width: number) {
  const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
  assert.ok(scrollWidth <= width, `${name}: the page is ${scrollWidth} px wide at ${width}`);
  assert.deepEqual(await accessibilityViolations(page), [], `axe on ${name}`);
  await screenshot(page, name);
}

/** Each badge's label against its fill (4.5:1) and its fill against the page (3:1), as rendered. */
async function badgeContrasts(page: Page) {
  const rendered = (await page.evaluate(`[...document.querySelectorAll('.badge')].map((badge) => {
      const hex = (rgb) => '#' + rgb.match(/\\d+/g).slice(0, 3).map((c) => Number(c).toString(16).padStart(2, '0')).join('');
      const style = getComputedStyle(badge);
      return { text: badge.textContent, label: hex(style.color), fill: hex(style.backgroundColor),
               page: hex(getComputedStyle(document.body).backgroundColor) };
    })`)) as { text: string; label: string; fill: string; page: string }[];
  assert.ok(rendered.length > 0, 'badges are shown');
  for (const badge of rendered) {
    assert.ok(contrast(badge.label, badge.fill) >= 4.5, `${badge.text}: label ${JSON.stringify(badge)}`);
    assert.ok(
      contrast(badge.fill, badge.page) >= 3,
      `${badge.text}: fill on the page ${JSON.stringify(badge)}`,
    );
  }
  return rendered;
}

const SCREENS = [
  ['endpoints', '/portal/', /Endpoints|Points de réception/],
  ['event-types', '/portal/event-types', /Event types|Types d’événements/],
  ['events', '/portal/events', /Events|Événements/],
  ['endpoint-failing', `/portal/endpoints/${flakyId}`, /flaky/],
  ['endpoint-paused', `/portal/endpoints/${heldId}`, /held/],
] as const;

describe('the portal’s screens', () => {
  test('every screen in English and French, at 390 and 1280 px: no sideways page, axe clean, saved', async () => {
    for (const width of [390, 1280]) {
      for (const language of ['en', 'fr'] as const) {
        for (const [name, path, heading] of SCREENS) {
          const { page, problems } = await open(width, language, path);
          await page.getByRole('heading', { level: 1, name: heading }).waitFor();
          if (name.startsWith('endpoint-')) await page.locator('table.log tbody tr').first().waitFor();
          await check(page, `${name}-${width}-${language}`, width);
          assert.deepEqual(problems, []);
          await page.close();
        }
      }
    }
  });

  test('badges say the state in words and colour, readable on a light and on a dark theme', async () => {
    const { page } = await open(1280, 'en');
    await page.getByRole('link', { name: /held/ }).waitFor();
    const light = await badgeContrasts(page);
    assert.deepEqual(light.map((b) => b.text).sort(), ['Active', 'Active', 'Paused']);
    // The failing endpoint's log: its dead deliveries stand out.
    await page.getByRole('link', { name: /flaky/ }).click();
    await page.locator('tr[data-state="dead"] .badge', { hasText: 'Dead' }).first().waitFor();
    await badgeContrasts(page);
    await page.close();

    const dark = await project({
      background: '#111827',
      text: '#F9FAFB',
      primary: '#60A5FA',
      accent: '#FBBF24',
    });
    await service.request('POST', '/core/v1/webhook-endpoints', {
      key: dark.key,
      headers: idem(),
      body: { url: `${good.url}/dark`, eventTypes: ['*'] },
    });
    const minted = await service.request('POST', '/core/v1/portal-sessions', {
      key: dark.key,
      headers: idem(),
      body: {},
    });
    const darkPage = await browser.newPage({ viewport: { width: 390, height: 900 } });
    await darkPage.goto(minted.body.url);
    await darkPage.getByRole('link', { name: /dark/ }).waitFor();
    const [badge] = await badgeContrasts(darkPage);
    assert.notEqual(badge?.fill, light[0]?.fill, 'the shade changes with the background');
    await check(darkPage, 'endpoints-dark-390-en', 390);
    await darkPage.close();
  });

  test('the catalogue shows each type’s description, schema and example; an endpoint subscribes by picking', async () => {
    const { page } = await open(390, 'fr', '/portal/event-types');
    await page.getByRole('heading', { level: 1, name: 'Types d’événements' }).waitFor();
    const pay = page.locator('.catalogue li', { hasText: 'pay.payment.succeeded' });
    await pay.getByText('A payment was captured').waitFor();
    await pay.getByText('Points de réception abonnés : 3').waitFor(); // pay.*, and * twice (one paused)
    await pay.getByText('Schéma').click();
    await pay.getByText('"required"').waitFor();
    await pay.getByText('Exemple').click();
    await pay.getByText('"amount": 4200').waitFor();
    await check(page, 'event-types-open-390-fr', 390);
    await page.locator('.catalogue li', { hasText: 'core.webhook.test' }).getByText('Plateforme').waitFor();

    // Subscribe by picking: "all" off, the declared type on, a pattern typed beside it.
    await page.getByRole('link', { name: 'Points de réception' }).click();
    await page.getByLabel('URL du point de réception').fill(`${good.url}/picked`);
    await page.getByLabel('Tous les types d’événements (*)').uncheck();
    await page.getByRole('checkbox', { name: /pay\.payment\.succeeded/ }).check();
    await page.getByLabel(/Autres types ou motifs/).fill('shop.*');
    await page.getByRole('button', { name: 'Ajouter' }).click();
    await page.getByTestId('secret').waitFor();
    await check(page, 'endpoint-created-390-fr', 390);
    const listed = (await api('GET', '/core/v1/webhook-endpoints')).body.data as {
      url: string;
      eventTypes: string[];
    }[];
    assert.deepEqual(listed.find((e) => e.url.endsWith('/picked'))?.eventTypes, [
      'pay.payment.succeeded',
      'shop.*',
    ]);
    await page.close();
  });

  test('the next attempt and why it waits; Retry sends a dead delivery again', async () => {
    const { page } = await open(1280, 'en', `/portal/endpoints/${heldId}`);
    const row = page.locator('table.log tbody tr').first();
    await row.getByText('endpoint paused').waitFor();
    assert.equal(
      await row.getByRole('button', { name: /^Retry/ }).count(),
      0,
      'nothing to retry while paused',
    );
    await page.close();

    failing = false;
    const { page: failingPage } = await open(1280, 'en', `/portal/endpoints/${flakyId}`);
    // The chart: two failed attempts for each of the two events, in the last 24 hours.
    await failingPage.getByText('0 succeeded, 4 failed').waitFor();
    const dead = failingPage.locator('tr[data-state="dead"]', { hasText: 'shop.order.placed' });
    await dead.getByRole('button', { name: /^Retry/ }).click();
    await failingPage
      .locator('tr[data-state="delivered"]', { hasText: 'shop.order.placed' })
      .waitFor({ timeout: 15_000 });
    await check(failingPage, 'endpoint-retried-1280-en', 1280);
    failing = true;
    await failingPage.close();
  });

  test('send failed events again since…: counted first, then a job shown to its end', async () => {
    failing = false;
    const { page } = await open(390, 'fr', `/portal/endpoints/${flakyId}`);
    await page.getByRole('heading', { level: 2, name: 'Renvoyer les événements en échec' }).waitFor();
    await page.getByRole('button', { name: 'Les compter' }).click();
    await page.getByText('Événements en échec depuis : 1.').waitFor(); // the payment; the order was retried
    await page.getByRole('button', { name: 'En renvoyer 1' }).click();
    await page.getByText('Terminé · 1 sur 1 renvoyés').waitFor({ timeout: 15_000 });
    await check(page, 'endpoint-recovered-390-fr', 390);
    await eventually(async () =>
      (await deliveries(flakyId)).some(
        (d) => d.eventType === 'pay.payment.succeeded' && d.state === 'delivered',
      ),
    );
    await page.close();
  });

  test('an endpoint’s URL, types and rate are edited in one form', async () => {
    const { page } = await open(1280, 'en', `/portal/endpoints/${goodId}`);
    await page.getByRole('heading', { level: 2, name: 'Settings' }).waitFor();
    await page.getByLabel('Endpoint URL').fill(`${good.url}/moved`);
    await page.getByLabel(/Other types or patterns/).fill('pay.*, shop.*');
    await page.getByLabel('Deliveries per second').fill('5');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved.').waitFor();
    const { body } = await api('GET', `/core/v1/webhook-endpoints/${goodId}`);
    assert.equal(body.url, `${good.url}/moved`);
    assert.deepEqual(body.eventTypes, ['pay.*', 'shop.*']);
    assert.equal(body.rateLimitPerSecond, 5);
    // A refused URL is said beside its field.
    await page.getByLabel('Endpoint URL').fill('ftp://example.com/');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.locator('#endpoint-url-error').waitFor();
    await check(page, 'endpoint-settings-1280-en', 1280);
    await page.close();
  });

  test('an example of a type of the catalogue, sent to one endpoint and seen arriving', async () => {
    const { page } = await open(390, 'en', `/portal/endpoints/${goodId}`);
    await page.getByRole('heading', { level: 2, name: 'Send an example' }).waitFor();
    await page.getByLabel('Event type', { exact: true }).last().selectOption('pay.payment.succeeded');
    await page.getByText('"amount": 4200').waitFor();
    const before = good.received.length;
    await page.getByRole('button', { name: 'Send example' }).click();
    await page.getByText('An example of pay.payment.succeeded was sent to this endpoint.').waitFor();
    await good.waitFor(before + 1);
    assert.deepEqual(JSON.parse(good.received.at(-1)?.body ?? '{}').data, { amount: 4200 });
    await page.locator('table.log tbody tr', { hasText: 'pay.payment.succeeded' }).first().waitFor();
    await check(page, 'endpoint-example-390-en', 390);
    await page.close();
  });

  test('the project’s event log, filtered by a delivery’s state and by type', async () => {
    const { page } = await open(1280, 'en', '/portal/events');
    await page.getByRole('heading', { level: 1, name: 'Events' }).waitFor();
    await page.locator('table.log tbody tr').first().waitFor();
    await page.getByLabel('With a delivery').selectOption('pending');
    await page.getByRole('button', { name: 'Filter' }).click();
    // The paused endpoint holds one delivery of each event: both listed, each with its pending one.
    await eventually(async () => (await page.locator('table.log tbody tr').count()) === 2);
    await page.locator('table.log .badge', { hasText: '1 Pending' }).first().waitFor();
    await page.getByLabel('Event type').fill('shop.order.placed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await eventually(async () => (await page.locator('table.log tbody tr').count()) === 1);
    await page.getByRole('link', { name: 'shop.order.placed' }).click();
    await page.getByRole('heading', { level: 1, name: 'shop.order.placed' }).waitFor();
    await check(page, 'event-from-log-1280-en', 1280);
    await page.close();
  });
});
