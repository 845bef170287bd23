// The portal's screens on par with the webhook portals developers know, in Chromium against the real service
// and receivers on loopback: state badges (contrast held against a light and a dark project theme), the
// event-type catalogue, subscribing by picking types, the attempts chart, the next attempt and why a
// delivery waits, Retry, "send failed events again since…" with its count and the job's progress, editing
// an endpoint, sending an example, and the project-wide event log with its filters. Every screen and every
// action in English and French, at 390 and 1280 px (each on a project of its own; the screens at 360 px
// too), with axe and no sideways page; screenshots under test-results/portal/.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { contrast } from '../web/portal/src/colours.ts';
import { en, type MessageKey } from '../web/portal/src/i18n/en.ts';
import { fr } from '../web/portal/src/i18n/fr.ts';
import { startService, type Tenant } from './helpers/app.ts';
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
const WIDTHS = [390, 1280] as const;
const LANGUAGES = ['en', 'fr'] as const;
type Language = (typeof LANGUAGES)[number];
const CATALOGUES = { en, fr };
/** A message as the portal shows it in that language, its parameters filled in. */
const say = (language: Language, key: MessageKey, params: Record<string, string | number> = {}) =>
  CATALOGUES[language][key].replace(/\{(\w+)\}/g, (_, name: string) => String(params[name]));

// Receivers shared by every project: one answers 204, one fails for a project until it is healed, one
// stays paused. Each project has its own path on them, so projects made at once do not meet.
const good = await startReceiver();
const healed = new Set<string>();
const flaky = await startReceiver((received, _index, response) =>
  response.writeHead(healed.has(received.path) ? 204 : 500).end(),
);
const held = await startReceiver();

/**
 * A project in English and French (in the given theme), with a declared type (schema and example), an
 * endpoint for pay.* that delivers, one for * whose two deliveries are dead, one paused holding two.
 */
async function fixture(theme: Record<string, string> = { primary: '#1D4ED8' }) {
  const tenant = await service.tenant();
  const patched = await service.request('PATCH', `/admin/v1/projects/${tenant.projectId}`, {
    key: operator.key,
    headers: { ...idem(), 'content-type': 'application/merge-patch+json' },
    body: { languages: ['en', 'fr'], theme },
  });
  assert.equal(patched.status, 200, patched.text);
  const api = (method: string, path: string, body?: unknown) =>
    service.request(method, path, { key: tenant.key, headers: idem(), body });
  await api('PUT', '/core/v1/event-types/pay.payment.succeeded', {
    description: 'A payment was captured',
    schema: { type: 'object', required: ['amount'], properties: { amount: { type: 'integer' } } },
    example: { amount: 4200 },
  });
  const create = async (url: string, eventTypes: string[]) =>
    (await api('POST', '/core/v1/webhook-endpoints', { url, eventTypes })).body.id as string;
  const goodId = await create(`${good.url}/good`, ['pay.*']);
  // Its own path on the flaky receiver, as long as the one every project shared (the screens are measured
  // at 360 px with this URL in them).
  const flakyUrl = `${flaky.url}/f${tenant.projectId.slice(0, 4)}`;
  const flakyId = await create(flakyUrl, ['*']);
  const heldId = await create(`${held.url}/held`, ['*']);
  await api('POST', `/core/v1/webhook-endpoints/${heldId}/pause`);
  await api('POST', '/core/v1/events', { type: 'pay.payment.succeeded', data: { amount: 4200 } });
  await api('POST', '/core/v1/events', { type: 'shop.order.placed', data: { order: 7 } });
  const deliveries = async (id: string) =>
    (await api('GET', `/core/v1/webhook-endpoints/${id}/deliveries`)).body.data as {
      state: string;
      eventType: string;
    }[];
  await eventually(async () => {
    const states = (await deliveries(flakyId)).map((d) => d.state);
    return states.length === 2 && states.every((state) => state === 'dead');
  });
  /** The flaky receiver answers this project's deliveries 204 from now on. */
  const heal = () => healed.add(new URL(flakyUrl).pathname);
  return { tenant, api, goodId, flakyId, flakyUrl, heldId, deliveries, heal };
}
type Fixture = Awaited<ReturnType<typeof fixture>>;

async function open(tenant: Tenant, width: number, language: Language, path = '/portal/') {
  const minted = await service.request('POST', '/core/v1/portal-sessions', {
    key: tenant.key,
    headers: idem(),
    body: { language },
  });
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

/** Runs an action once per language and width, each on a project of its own, all at once. */
async function everywhere(
  action: (f: Fixture, language: Language, width: number, name: string) => Promise<void>,
) {
  const combinations = WIDTHS.flatMap((width) => LANGUAGES.map((language) => [width, language] as const));
  await Promise.all(
    combinations.map(async ([width, language]) =>
      action(await fixture(), language, width, `${width}-${language}`),
    ),
  );
}

describe('the portal’s screens', () => {
  test('every screen in English and French, at 360, 390 and 1280 px: no sideways page, axe clean, saved', async () => {
    const f = await fixture();
    const screens = [
      ['endpoints', '/portal/', 'endpoints.title'],
      ['event-types', '/portal/event-types', 'types.title'],
      ['events', '/portal/events', 'events.title'],
      ['endpoint-failing', `/portal/endpoints/${f.flakyId}`, undefined],
      ['endpoint-paused', `/portal/endpoints/${f.heldId}`, undefined],
    ] as const;
    // 360 px too: the narrowest phone the portal is made for.
    for (const width of [360, ...WIDTHS]) {
      for (const language of LANGUAGES) {
        for (const [name, path, heading] of screens) {
          const { page, problems } = await open(f.tenant, width, language, path);
          if (heading) await page.getByRole('heading', { level: 1, name: say(language, heading) }).waitFor();
          else await page.locator('table.log tbody tr').first().waitFor();
          await check(page, `${name}-${width}-${language}`, width);
          assert.deepEqual(problems, []);
          await page.close();
        }
      }
    }
  });

  test('badges say the state in words and colour, readable on a light and on a dark theme', async () => {
    const light = await fixture();
    const { page } = await open(light.tenant, 1280, 'en');
    await page.getByRole('link', { name: /held/ }).waitFor();
    const shown = await badgeContrasts(page);
    assert.deepEqual(shown.map((b) => b.text).sort(), ['Active', 'Active', 'Paused']);
    await page.getByRole('link', { name: light.flakyUrl }).click();
    await page.locator('tr[data-state="dead"] .badge', { hasText: 'Dead' }).first().waitFor();
    await badgeContrasts(page);
    await page.close();

    const dark = await fixture({
      background: '#111827',
      text: '#F9FAFB',
      primary: '#60A5FA',
      accent: '#FBBF24',
    });
    for (const language of LANGUAGES) {
      const { page: darkPage } = await open(dark.tenant, 390, language);
      await darkPage.getByRole('link', { name: /held/ }).waitFor();
      const [badge] = await badgeContrasts(darkPage);
      assert.notEqual(badge?.fill, shown[0]?.fill, 'the shade changes with the background');
      await check(darkPage, `endpoints-dark-390-${language}`, 390);
      await darkPage.close();
    }
  });

  test('the catalogue shows each type’s description, schema and example; an endpoint subscribes by picking', async () => {
    await everywhere(async (f, language, width, name) => {
      const { page } = await open(f.tenant, width, language, '/portal/event-types');
      const pay = page.locator('.catalogue li', { hasText: 'pay.payment.succeeded' });
      await pay.getByText('A payment was captured').waitFor();
      await pay.getByText(say(language, 'types.subscribers', { count: 3 })).waitFor(); // pay.*, * twice
      await pay.getByText(say(language, 'types.schema')).click();
      await pay.getByText('"required"').waitFor();
      await pay.getByText(say(language, 'types.example'), { exact: true }).waitFor(); // shown, not folded
      await pay.getByText('"amount": 4200').waitFor();
      await page
        .locator('.catalogue li', { hasText: 'core.webhook.test' })
        .getByText(say(language, 'types.platform'), { exact: true })
        .waitFor();
      // The platform's types in the portal's language, in words; a search keeps what matches.
      await page.getByText(say(language, 'core.endpoint.paused')).waitFor();
      assert.equal(await page.getByText('PATCH active').count(), 0, 'no route in a description');
      await page.getByLabel(say(language, 'types.search')).fill('endpoint.paused');
      await eventually(async () => (await page.locator('.catalogue li').count()) === 1);
      await page.getByLabel(say(language, 'types.search')).fill('');
      // "Send an example" from the type, to an endpoint picked there: it arrives at the receiver.
      const before = good.received.length;
      await pay.getByLabel(say(language, 'types.sendTo')).selectOption({ label: `${good.url}/good` });
      await pay.getByRole('button', { name: say(language, 'example.send') }).click();
      await pay.getByRole('status').waitFor();
      await eventually(async () =>
        good.received
          .slice(before)
          .some(
            (r) =>
              JSON.parse(r.body).type === 'pay.payment.succeeded' && JSON.parse(r.body).data.amount === 4200,
          ),
      );
      await check(page, `event-types-open-${name}`, width);

      // Subscribe by picking: "all" off, the declared type on, a pattern typed beside it.
      await page.getByRole('link', { name: say(language, 'nav.endpoints') }).click();
      // The form is behind a button, with the receiver's name and headers beside the URL.
      await page.getByRole('button', { name: say(language, 'create.title') }).click();
      await page.getByLabel(say(language, 'create.url')).fill(`${good.url}/picked`);
      await page.getByLabel(say(language, 'receiver.name')).fill(`Picked ${name}`);
      await page.getByLabel(say(language, 'receiver.headers')).fill('X-Tenant: acme-7');
      await page.getByText(say(language, 'auth.title')).click();
      await check(page, `endpoint-form-${name}`, width); // the opened form: axe, no sideways page
      await page.getByLabel(say(language, 'types.all')).uncheck();
      await page.getByRole('checkbox', { name: /pay\.payment\.succeeded/ }).check();
      await page.getByLabel(say(language, 'types.other')).fill('shop.*');
      await page.getByRole('button', { name: say(language, 'create.submit') }).click();
      await page.getByTestId('secret').waitFor();
      await check(page, `endpoint-created-${name}`, width);
      const listed = (await f.api('GET', '/core/v1/webhook-endpoints')).body.data as {
        url: string;
        eventTypes: string[];
        name: string | null;
        headers: Record<string, string>;
      }[];
      const picked = listed.find((e) => e.url.endsWith('/picked'));
      assert.deepEqual(picked?.eventTypes, ['pay.payment.succeeded', 'shop.*']);
      assert.equal(picked?.name, `Picked ${name}`);
      assert.deepEqual(picked?.headers, { 'x-tenant': '***' });
      await page.getByRole('link', { name: say(language, 'endpoint.back') }).click();
      await page.getByRole('link', { name: `Picked ${name}` }).waitFor();
      await page.close();
    });
  });

  test('the attempts chart, the next attempt and why it waits; Retry sends a dead delivery again', async () => {
    await everywhere(async (f, language, width, name) => {
      const { page } = await open(f.tenant, width, language, `/portal/endpoints/${f.heldId}`);
      const row = page.locator('table.log tbody tr').first();
      await row.getByText(say(language, 'wait.paused')).waitFor();
      assert.equal(await row.getByRole('button', { name: say(language, 'log.retry') }).count(), 0);
      await page.close();

      f.heal();
      const { page: flakyPage } = await open(f.tenant, width, language, `/portal/endpoints/${f.flakyId}`);
      // The chart: two failed attempts for each of the two events, in the last 24 hours.
      await flakyPage.getByText(say(language, 'stats.summary', { succeeded: 0, failed: 4 })).waitFor();
      // Its axis says where it starts and ends (both ends are the same time of day).
      const axis = await flakyPage.locator('text.axis').allTextContents();
      assert.ok(
        axis.includes(say(language, 'stats.from')) && axis.includes(say(language, 'stats.to')),
        `${axis}`,
      );
      const dead = flakyPage.locator('tr[data-state="dead"]', { hasText: 'shop.order.placed' });
      await dead.getByRole('button', { name: new RegExp(`^${say(language, 'log.retry')}`) }).click();
      await flakyPage
        .locator('tr[data-state="delivered"]', { hasText: 'shop.order.placed' })
        .waitFor({ timeout: 15_000 });
      await check(flakyPage, `endpoint-retried-${name}`, width);
      await flakyPage.close();
    });
  });

  test('send failed events again since…: counted first, then a job shown to its end', async () => {
    await everywhere(async (f, language, width, name) => {
      f.heal();
      const { page } = await open(f.tenant, width, language, `/portal/endpoints/${f.flakyId}`);
      await page.getByRole('heading', { level: 2, name: say(language, 'recover.title') }).waitFor();
      await page.getByRole('button', { name: say(language, 'recover.count') }).click();
      await page.getByText(say(language, 'recover.matched', { count: 2 })).waitFor();
      await page.getByRole('button', { name: say(language, 'recover.start', { count: 2 }) }).click();
      const done = `${say(language, 'job.done')} · ${say(language, 'recover.progress', { done: 2, total: 2 })}`;
      await page.getByText(done).waitFor({ timeout: 15_000 });
      await check(page, `endpoint-recovered-${name}`, width);
      await eventually(
        async () => (await f.deliveries(f.flakyId)).filter((d) => d.state === 'delivered').length === 2,
      );
      await page.close();
    });
  });

  test('an endpoint’s URL, types, rate, name and headers are edited in one form; a refusal is said beside its field', async () => {
    await everywhere(async (f, language, width, name) => {
      const { page } = await open(f.tenant, width, language, `/portal/endpoints/${f.goodId}`);
      await page.getByRole('heading', { level: 2, name: say(language, 'settings.title') }).waitFor();
      await page.getByLabel(say(language, 'create.url')).fill(`${good.url}/moved`);
      await page.getByLabel(say(language, 'types.other')).fill('pay.*, shop.*');
      await page.getByLabel(say(language, 'endpoint.rate')).fill('5');
      await page.getByLabel(say(language, 'receiver.name')).fill('Ledger');
      await page.getByLabel(say(language, 'receiver.description')).fill('Finance');
      await page.getByLabel(say(language, 'receiver.headers')).fill('x-a: 1\nx-b: two words');
      await page.getByRole('button', { name: say(language, 'settings.save') }).click();
      await page.getByText(say(language, 'endpoint.saved')).waitFor();
      const { body } = await f.api('GET', `/core/v1/webhook-endpoints/${f.goodId}`);
      assert.equal(body.url, `${good.url}/moved`);
      assert.deepEqual(body.eventTypes, ['pay.*', 'shop.*']);
      assert.equal(body.rateLimitPerSecond, 5);
      assert.equal(body.name, 'Ledger');
      assert.equal(body.description, 'Finance');
      assert.deepEqual(body.headers, { 'x-a': '***', 'x-b': '***' });
      // The values are not shown again; a name and a colon alone removes its header.
      assert.equal(await page.getByLabel(say(language, 'receiver.headers')).inputValue(), '');
      await page.getByLabel(say(language, 'receiver.headers')).fill('x-a:');
      await page.getByRole('button', { name: say(language, 'settings.save') }).click();
      await eventually(
        async () =>
          JSON.stringify((await f.api('GET', `/core/v1/webhook-endpoints/${f.goodId}`)).body.headers) ===
          '{"x-b":"***"}',
      );
      await page.getByLabel(say(language, 'receiver.headers')).fill('no colon here');
      await page.getByRole('button', { name: say(language, 'settings.save') }).click();
      await page.getByText(say(language, 'receiver.headersLines')).waitFor();
      await page.getByLabel(say(language, 'receiver.headers')).fill('host: evil');
      await page.getByRole('button', { name: say(language, 'settings.save') }).click();
      await page.locator('#endpoint-headers-error').waitFor();
      await page.getByLabel(say(language, 'receiver.headers')).fill('');
      // A filter: JSON the form checks, a pattern the API checks, then one that is kept.
      const filter = page.getByLabel(say(language, 'receiver.filter'));
      await filter.fill('{"type": ');
      await page.getByRole('button', { name: say(language, 'settings.save') }).click();
      await page.getByText(say(language, 'receiver.filterJson')).waitFor();
      await filter.fill('{"data": {"amount": [{"regex": ".*"}]}}');
      await page.getByRole('button', { name: say(language, 'settings.save') }).click();
      await page.locator('#endpoint-filter-error').waitFor();
      // OAuth client credentials, folded away until asked for; a certificate that is not one is refused.
      await filter.fill('{"type": [{"prefix": "pay."}]}');
      await page.getByText(say(language, 'auth.title')).click();
      await page.getByLabel(say(language, 'auth.tokenUrl')).fill('http://127.0.0.1:9/oauth/token');
      await page.getByLabel(say(language, 'auth.clientId')).fill('portal-client');
      await page.getByLabel(say(language, 'auth.clientSecret')).fill('portal-secret');
      await page.getByLabel(say(language, 'auth.certificate')).fill('not a certificate');
      await page.getByLabel(say(language, 'auth.privateKey')).fill('not a key');
      await page.getByRole('button', { name: say(language, 'settings.save') }).click();
      await page.getByText('the certificate is not a PEM X.509 certificate').waitFor();
      await page.getByLabel(say(language, 'auth.certificate')).fill('');
      await page.getByLabel(say(language, 'auth.privateKey')).fill('');
      await filter.fill('{"type": [{"prefix": "pay."}]}');
      await page.getByRole('button', { name: say(language, 'settings.save') }).click();
      await eventually(
        async () =>
          JSON.stringify((await f.api('GET', `/core/v1/webhook-endpoints/${f.goodId}`)).body.filter) ===
          '{"type":[{"prefix":"pay."}]}',
      );
      const { body: after } = await f.api('GET', `/core/v1/webhook-endpoints/${f.goodId}`);
      assert.deepEqual(after.auth, {
        type: 'oauth2_client_credentials',
        tokenUrl: 'http://127.0.0.1:9/oauth/token',
        clientId: 'portal-client',
        clientSecret: '***',
      });
      await page
        .getByText(
          say(language, 'auth.oauthSet', { clientId: 'portal-client', tokenUrl: after.auth.tokenUrl }),
        )
        .waitFor();
      await page.getByLabel(say(language, 'create.url')).fill('ftp://example.com/');
      await page.getByRole('button', { name: say(language, 'settings.save') }).click();
      await page.locator('#endpoint-url-error').waitFor();
      await check(page, `endpoint-settings-${name}`, width);
      await page.close();
    });
  });

  test('a disabled endpoint says why, and is enabled again', async () => {
    await everywhere(async (f, language, width, name) => {
      const disabled = await service.request('PATCH', `/core/v1/webhook-endpoints/${f.goodId}`, {
        key: f.tenant.key,
        headers: { ...idem(), 'content-type': 'application/merge-patch+json' },
        body: { active: false },
      });
      assert.equal(disabled.body.active, false, disabled.text);
      const { page } = await open(f.tenant, width, language, `/portal/endpoints/${f.goodId}`);
      await page.locator('.state .badge', { hasText: say(language, 'endpoints.disabled') }).waitFor();
      await page.getByText(say(language, 'endpoint.disabledWhy')).waitFor();
      await check(page, `endpoint-disabled-${name}`, width);
      await page.getByRole('button', { name: say(language, 'endpoint.enable') }).click();
      await page.locator('.state .badge', { hasText: say(language, 'endpoints.active') }).waitFor();
      assert.equal((await f.api('GET', `/core/v1/webhook-endpoints/${f.goodId}`)).body.active, true);
      await page.close();
    });
  });

  test('an example of a type of the catalogue, sent to one endpoint and seen arriving', async () => {
    await everywhere(async (f, language, width, name) => {
      const { page } = await open(f.tenant, width, language, `/portal/endpoints/${f.goodId}`);
      await page.getByRole('heading', { level: 2, name: say(language, 'example.title') }).waitFor();
      // The project's own type is offered first, not the platform's.
      await eventually(
        async () => (await page.locator('#example-type').inputValue()) === 'pay.payment.succeeded',
      );
      await page.locator('#example-type').selectOption('pay.payment.succeeded');
      await page.getByText('"amount": 4200').waitFor();
      const before = good.received.length;
      const reads: number[] = [];
      page.on('request', (request) => {
        if (request.method() === 'GET' && request.url().includes('/deliveries?')) reads.push(Date.now());
      });
      const sentAt = Date.now();
      await page.getByRole('button', { name: say(language, 'example.send') }).click();
      await page.getByText(say(language, 'example.sent', { type: 'pay.payment.succeeded' })).waitFor();
      await good.waitFor(before + 1);
      assert.deepEqual(JSON.parse(good.received.at(-1)?.body ?? '{}').data, { amount: 4200 });
      await eventually(async () => (await page.locator('table.log tbody tr').count()) === 2);
      if (name === '1280-en') {
        // After a change the log is read every half second, not every two: what was sent is seen arriving.
        // The ordinary poll needs 6 s or more for the three reads after the send's own; following, 1.5 s.
        // (Not a count within a fixed time: a loaded machine delays the reads, and the count with them.)
        const after = () => reads.filter((at) => at >= sentAt);
        await eventually(async () => after().length >= 4, 10_000, 'four reads of the log after the send');
        const [first = 0, , , fourth = 0] = after();
        assert.ok(fourth - first < 6000, `three reads took ${fourth - first} ms after the send's`);
      }
      await check(page, `endpoint-example-${name}`, width);
      await page.close();
    });
  });

  test('the project’s event log, filtered by a delivery’s state, by time and by type', async () => {
    await everywhere(async (f, language, width, name) => {
      const { page } = await open(f.tenant, width, language, '/portal/events');
      await page.getByRole('heading', { level: 1, name: say(language, 'events.title') }).waitFor();
      await page.locator('table.log tbody tr').first().waitFor();
      await page.getByLabel(say(language, 'events.withState')).selectOption('pending');
      await page.getByRole('button', { name: say(language, 'log.filter') }).click();
      // The paused endpoint holds one delivery of each event: both listed, each with its pending one.
      await eventually(async () => (await page.locator('table.log tbody tr').count()) === 2);
      await page
        .locator('table.log .badge', { hasText: `1 ${say(language, 'state.pending')}` })
        .first()
        .waitFor();
      // A window of time that ends before the events: none.
      await page.getByLabel(say(language, 'events.until')).fill('2020-01-01T00:00');
      await page.getByRole('button', { name: say(language, 'log.filter') }).click();
      await page.getByText(say(language, 'events.empty')).waitFor();
      await page.getByLabel(say(language, 'events.until')).fill('');
      await page.getByLabel(say(language, 'log.filterType')).fill('shop.order.placed');
      await page.getByRole('button', { name: say(language, 'log.filter') }).click();
      await eventually(async () => (await page.locator('table.log tbody tr').count()) === 1);
      await page.getByRole('link', { name: 'shop.order.placed' }).click();
      await page.getByRole('heading', { level: 1, name: 'shop.order.placed' }).waitFor();
      await check(page, `event-from-log-${name}`, width);
      await page.close();
    });
  });

  test('a message found by the webhook-id its receiver got; its page calls each endpoint by its name', async () => {
    await everywhere(async (f, language, width, name) => {
      await service.request('PATCH', `/core/v1/webhook-endpoints/${f.goodId}`, {
        key: f.tenant.key,
        headers: { ...idem(), 'content-type': 'application/merge-patch+json' },
        body: { name: `Payments ${name}` },
      });
      const events = (await f.api('GET', '/core/v1/events?type=pay.payment.succeeded')).body.data as {
        id: string;
      }[];
      const ids = new Set(events.map((e) => e.id));
      const got = await eventually(async () =>
        good.received.find((r) => ids.has(String(r.headers['webhook-id']))),
      );
      const webhookId = String(got.headers['webhook-id']);
      const { page } = await open(f.tenant, width, language, '/portal/events');
      await page.getByLabel(say(language, 'events.find')).fill('not-an-id');
      await page.getByRole('button', { name: say(language, 'events.findGo') }).click();
      await page.getByText(say(language, 'events.notAnId')).waitFor();
      await page.getByLabel(say(language, 'events.find')).fill(webhookId.toUpperCase());
      await page.getByRole('button', { name: say(language, 'events.findGo') }).click();
      await page.getByRole('heading', { level: 1, name: 'pay.payment.succeeded' }).waitFor();
      await page.getByText(webhookId).waitFor();
      // The navigation marks Events, and the delivery's endpoint is called by its name.
      const current = page.locator('nav a[aria-current="page"]');
      assert.equal(await current.textContent(), say(language, 'nav.events'));
      await page.getByRole('link', { name: `Payments ${name}` }).waitFor();
      await check(page, `event-found-${name}`, width);
      await page.close();
    });
  });
});
