// The portal's screens on par with the webhook portals developers know, in Chromium against the real service
// and receivers on loopback: state badges (contrast held against a light and a dark project theme), the
// event-type catalogue, subscribing by picking types, the attempts chart, the next attempt and why a
// delivery waits, Retry, and "send failed events again since…" with its count and the job's progress.
// Every screen and every action in English and French, at 390 and 1280 px (each on a project of its own;
// the screens at 360 px too), with axe and no sideways page; screenshots under test-results/portal/. An
// endpoint's own screens: portal-endpoint-screens.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  badgeContrasts,
  check,
  everywhere,
  fixture,
  good,
  LANGUAGES,
  open,
  say,
  WIDTHS,
} from './helpers/portal-screens.ts';
import { eventually } from './helpers/receiver.ts';

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
    // 360 px too: the narrowest phone the portal is made for. The two languages side by side, each in
    // pages of its own.
    for (const width of [360, ...WIDTHS]) {
      await Promise.all(
        LANGUAGES.map(async (language) => {
          for (const [name, path, heading] of screens) {
            const { page, problems } = await open(f.tenant, width, language, path);
            if (heading)
              await page.getByRole('heading', { level: 1, name: say(language, heading) }).waitFor();
            else await page.locator('table.log tbody tr').first().waitFor();
            await check(page, `${name}-${width}-${language}`, width);
            assert.deepEqual(problems, []);
            await page.close();
          }
        }),
      );
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
});
