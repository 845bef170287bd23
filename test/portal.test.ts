// The portal in a real browser (Chromium), against the real service and a loopback receiver: open a
// link, add an endpoint with the keyboard, copy its secret, send a test event and see it delivered,
// rotate and see both signatures verify, switch to French, and be refused once the session is revoked.
// axe-core runs on every screen, and each screen is saved in both languages (test-results/portal/).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { verifyWebhook } from '@platform-core/webhooks';
import { startService } from './helpers/app.ts';
import { accessibilityViolations, screenshot, startBrowser } from './helpers/browser.ts';
import { startReceiver } from './helpers/receiver.ts';

const service = await startService({
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100' },
  worker: true,
});
const operator = await service.operator();
const notify = await service.capability('notify', {
  manifest: {
    description: 'Messages',
    scopes: [{ name: 'notify:send', description: 'Send messages' }],
    metrics: [{ name: 'messages_sent', description: 'Messages sent', defaultDailyLimit: 500 }],
    eventTypes: [],
    providers: [],
    erasure: null,
    gateway: null,
  },
});
const browser = await startBrowser();
let n = 0;
const idem = () => ({ 'idempotency-key': `portal-ui-${++n}` });

/** A project in English and French, in its own colours, framed by its dashboard, and a link to its portal. */
async function projectWithLink(theme: Record<string, string> = { primary: '#7C3AED', accent: '#B45309' }) {
  const tenant = await service.tenant();
  const patch = { languages: ['en', 'fr'], theme, portalFrameAncestors: ['https://dashboard.example.com'] };
  const patched = await service.request('PATCH', `/admin/v1/projects/${tenant.projectId}`, {
    key: operator.key,
    headers: { ...idem(), 'content-type': 'application/merge-patch+json' },
    body: patch,
  });
  assert.equal(patched.status, 200, patched.text);
  const minted = await service.request('POST', '/core/v1/portal-sessions', {
    key: tenant.key,
    headers: idem(),
    body: {},
  });
  return { tenant, session: minted.body as { id: string; url: string } };
}

async function expectAccessible(page: Parameters<typeof accessibilityViolations>[0], screen: string) {
  assert.deepEqual(
    await accessibilityViolations(page),
    [],
    `serious or critical axe violations on ${screen}`,
  );
}

describe('the portal', () => {
  test('from a link to a delivered test event and a rotation, by keyboard, in English and French', async () => {
    const { tenant, session } = await projectWithLink();
    const receiver = await startReceiver();
    const context = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    const hosts = new Set<string>();
    page.on('request', (request) => hosts.add(new URL(request.url()).host));
    const errors: string[] = [];
    // Errors in the console other than the answers the flow expects (a 400, then a 401): a CSP refusal
    // or a script error would be one.
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of (400|401) /.test(message.text()))
        errors.push(message.text());
    });

    await page.goto(session.url);
    await page.getByRole('heading', { level: 1, name: 'Endpoints' }).waitFor();
    assert.equal(page.url(), `${service.baseUrl}/portal/`, 'the code is gone from the address bar');
    await expectAccessible(page, 'the endpoint list');
    await screenshot(page, 'endpoints-empty-en');

    // Keyboard only: Tab to the button that opens the form, Enter, Tab to the address, type, Enter.
    for (
      let i = 0;
      i < 20 && (await page.evaluate('document.activeElement?.textContent')) !== 'Add an endpoint';
      i++
    )
      await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    for (let i = 0; i < 20 && (await page.evaluate('document.activeElement?.id')) !== 'url'; i++)
      await page.keyboard.press('Tab');
    await page.keyboard.type('not an address');
    await page.keyboard.press('Enter');
    await page.locator('#url-error').waitFor();
    assert.equal(await page.getAttribute('#url', 'aria-invalid'), 'true');
    await expectAccessible(page, 'the form with its errors');
    await screenshot(page, 'endpoint-invalid-en');
    await page.fill('#url', receiver.url);
    await page.keyboard.press('Enter');

    const secret = page.getByTestId('secret');
    await secret.waitFor();
    const first = (await secret.textContent()) ?? '';
    assert.match(first, /^whsec_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), first);
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.locator('tr[data-state="delivered"]').first().waitFor({ timeout: 20_000 });
    await receiver.waitFor(1);
    assert.equal(
      (await verifyWebhook(receiver.received[0]!.body, receiver.received[0]!.headers, first)).type,
      'core.webhook.test',
    );
    await expectAccessible(page, 'the endpoint and its log');
    await screenshot(page, 'endpoint-en');

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('button', { name: 'Retire previous secret' }).waitFor();
    const second = (await secret.textContent()) ?? '';
    assert.ok(second.startsWith('whsec_') && second !== first);
    await service.request('POST', '/core/v1/events', {
      key: tenant.key,
      headers: idem(),
      body: { type: 'pay.payment.succeeded', data: { amount: 1 } },
    });
    await receiver.waitFor(2);
    const during = receiver.received[1]!;
    assert.equal(String(during.headers['webhook-signature']).split(' ').length, 2);
    for (const key of [first, second]) assert.ok(await verifyWebhook(during.body, during.headers, key));

    await page.getByLabel('Language').selectOption('fr');
    await page.getByRole('button', { name: 'Changer le secret' }).waitFor();
    await expectAccessible(page, 'the endpoint, in French');
    await screenshot(page, 'endpoint-fr');
    await page.getByRole('link', { name: /Tous les points de réception/ }).click();
    await page.getByRole('heading', { level: 1, name: 'Points de réception' }).waitFor();
    // The test event and the publish, both delivered at the first attempt: 100 %, in French.
    await page.getByRole('cell', { name: /^100\s%$/ }).waitFor();
    await screenshot(page, 'endpoints-fr');

    const revoked = await service.request('DELETE', `/core/v1/portal-sessions/${session.id}`, {
      key: tenant.key,
      headers: idem(),
    });
    assert.equal(revoked.status, 204);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Votre session est terminée' }).waitFor();
    await expectAccessible(page, 'the sign-in-expired page');
    await screenshot(page, 'expired-fr');
    assert.deepEqual([...hosts], [new URL(service.baseUrl).host], 'no request to any other host');
    assert.deepEqual(errors, [], 'no console error');
    await context.close();
  });

  test('an event (payload, deliveries, replay), usage with its daily limit, and the log filtered by state', async () => {
    const { tenant, session } = await projectWithLink();
    const receiver = await startReceiver();
    const created = await service.request('POST', '/core/v1/webhook-endpoints', {
      key: tenant.key,
      headers: idem(),
      body: { url: receiver.url, eventTypes: ['pay.*'] },
    });
    // Data the portal must show as published: a number past 2^53, members named like integers last.
    const published = await service.request('POST', '/core/v1/events', {
      key: tenant.key,
      headers: { ...idem(), 'content-type': 'application/json' },
      rawBody:
        '{"type":"pay.payment.succeeded","data":{"amount":4200,"currency":"EUR","big":12345678901234567890,"2":"b","10":"a"}}',
    });
    await receiver.waitFor(1);
    const page = await browser.newPage();
    await page.goto(session.url);
    await page.getByRole('link', { name: receiver.url }).click();
    await page.locator('tr[data-state="delivered"]').first().waitFor({ timeout: 20_000 });
    await page.getByLabel('State').selectOption('pending');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No delivery yet.').waitFor();
    await page.getByLabel('State').selectOption('delivered');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('link', { name: 'pay.payment.succeeded' }).click();
    await page.getByRole('heading', { level: 1, name: 'pay.payment.succeeded' }).waitFor();
    assert.equal(
      await page.locator('pre.payload').textContent(),
      '{\n  "amount": 4200,\n  "currency": "EUR",\n  "big": 12345678901234567890,\n  "2": "b",\n  "10": "a"\n}',
    );
    await expectAccessible(page, 'an event');
    await screenshot(page, 'event-en');
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.getByText('Replayed to 1 endpoint(s).').waitFor();
    await receiver.waitFor(2);
    assert.equal(
      receiver.received[1]!.headers['webhook-id'],
      published.body.eventId,
      'the same event, again',
    );
    assert.equal(created.status, 201);

    // A product's usage, reported through the capability plane, is on the same page as Core's.
    const recorded = await service.request('POST', '/capability/v1/usage', {
      key: notify.key,
      body: {
        records: [{ id: 'portal-msg-1', projectId: tenant.projectId, metric: 'messages_sent', value: 3 }],
      },
    });
    assert.equal(recorded.status, 200, recorded.text);
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { level: 1, name: 'Usage' }).waitFor();
    // Each chart under its human name, scaled to its own counts (an axis from 0 to a round top), the
    // daily limit drawn only when it is in view: 100,000 is not, beside a count of one or two.
    await page.getByRole('heading', { level: 2, name: 'Events published' }).waitFor();
    const chart = page.getByRole('img', { name: /Events published per day .* daily limit 100,000/ });
    await chart.waitFor();
    assert.ok((await chart.locator('rect.bar').count()) >= 14);
    assert.equal(await chart.locator('line.limit').count(), 0, 'the limit is far above the counts');
    const ticks = await chart.locator('text.axis').allTextContents();
    assert.ok(
      ['1', '2', '5'].includes(ticks[2] ?? ''),
      `the axis tops at a round figure near the counts: ${ticks}`,
    );
    const tallest = Math.max(
      ...(await chart
        .locator('rect.bar')
        .evaluateAll((bars) => bars.map((b) => Number(b.getAttribute('height'))))),
    );
    assert.ok(tallest >= 60, `the highest bar is drawn tall (${tallest} of 160)`);
    await page.getByRole('img', { name: /Notify · messages sent per day .* daily limit 500/ }).waitFor();
    await expectAccessible(page, 'usage');
    await screenshot(page, 'usage-en');
    await page.getByLabel('Language').selectOption('fr');
    await page.getByRole('heading', { level: 1, name: 'Utilisation' }).waitFor();
    await page.getByRole('img', { name: /limite quotidienne 100\s000/ }).waitFor();
    await screenshot(page, 'usage-fr');
    await page.reload(); // a page's own address loads it (the service serves every portal path)
    await page.getByRole('heading', { level: 1, name: 'Utilisation' }).waitFor();
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'pay.payment.succeeded' }).waitFor();
    await page.getByRole('button', { name: 'Renvoyer' }).waitFor();
    await screenshot(page, 'event-fr');
  });

  test('the keyboard alone: add, test, pause and resume, go back, delete through the confirmation', async () => {
    const { session } = await projectWithLink();
    const receiver = await startReceiver();
    const page = await browser.newPage();
    await page.goto(session.url);
    await page.getByRole('heading', { level: 1, name: 'Endpoints' }).waitFor();
    /** Tab until the focused element is the one named (its id, or its text). */
    const tabTo = async (name: string) => {
      for (let i = 0; i < 100; i++) {
        await page.keyboard.press('Tab');
        const focused = await page.evaluate(
          '[document.activeElement?.id, document.activeElement?.textContent?.trim()]',
        );
        if ((focused as string[]).includes(name)) return;
      }
      assert.fail(`Tab never reached ${name}`);
    };
    await tabTo('Add an endpoint');
    await page.keyboard.press('Enter');
    // The form opens with the keyboard on its heading.
    await page.waitForFunction('document.activeElement?.id === "create-title"');
    await tabTo('url');
    await page.keyboard.type(receiver.url);
    await page.keyboard.press('Enter');
    await page.getByTestId('secret').waitFor();
    await tabTo('Send test event');
    await page.keyboard.press('Enter');
    await page.locator('tr[data-state="delivered"]').first().waitFor({ timeout: 20_000 });
    await tabTo('Pause');
    await page.keyboard.press('Enter');
    await page.getByText('Paused', { exact: true }).waitFor();
    await tabTo('Resume');
    await page.keyboard.press('Enter');
    await page.getByText('Active', { exact: true }).waitFor();
    await page.keyboard.press('Shift+Tab');
    await tabTo('← All endpoints');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Endpoints' }).waitFor();
    // Deleting is on the endpoint's own screen, behind a confirmation (not a button on every row).
    await tabTo(receiver.url);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: receiver.url }).waitFor();
    await tabTo('Delete…');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Delete' });
    await dialog.waitFor();
    await expectAccessible(page, 'the confirmation');
    await screenshot(page, 'delete-en');
    assert.equal(
      await page.evaluate('document.activeElement?.closest("dialog") !== null'),
      true,
      'focus is in the dialog',
    );
    await page.keyboard.press('Escape'); // cancelled: nothing deleted
    await page.getByRole('heading', { level: 1, name: receiver.url }).waitFor();
    await tabTo('Delete…');
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    for (let i = 0; i < 5 && (await page.evaluate('document.activeElement?.className')) !== 'danger'; i++)
      await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByText('No endpoint yet.', { exact: false }).waitFor();
  });

  test('words typed for other types are kept while the catalogue arrives, and are what is saved', async () => {
    const { tenant, session } = await projectWithLink();
    const receiver = await startReceiver();
    const page = await browser.newPage();
    // The catalogue is held back until the words are typed, so its arrival re-renders the form mid-typing.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/core/v1/event-types', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(session.url);
    await page.getByRole('button', { name: 'Add an endpoint' }).click();
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByRole('checkbox', { name: 'All event types (*)' }).uncheck();
    const others = page.getByLabel(/Other types or patterns/);
    await others.pressSequentially('pay.*, shop.*');
    release();
    await page.getByRole('checkbox', { name: /core\.webhook\.test/ }).waitFor();
    assert.equal(await others.inputValue(), 'pay.*, shop.*');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByTestId('secret').waitFor();
    const list = await service.request('GET', '/core/v1/webhook-endpoints', { key: tenant.key });
    assert.deepEqual(list.body.data[0].eventTypes, ['pay.*', 'shop.*']);
  });

  test('a used link, and a session signed out, show the sign-in-expired page, not a half-rendered app', async () => {
    const { session } = await projectWithLink();
    const page = await browser.newPage();
    await page.goto(session.url);
    await page.getByRole('heading', { level: 1, name: 'Endpoints' }).waitFor();
    const other = await browser.newPage();
    await other.goto(session.url);
    await other.getByRole('heading', { level: 1, name: 'Your session has ended' }).waitFor();
    assert.equal(await other.locator('nav').count(), 0);
    await screenshot(other, 'expired-en');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Your session has ended' }).waitFor();
    await page.goto(`${service.baseUrl}/portal/`);
    await page.getByRole('heading', { level: 1, name: 'Your session has ended' }).waitFor();
  });

  test('a strict CSP on every page; framed by the project’s dashboard only; hashed assets cached', async () => {
    const { session } = await projectWithLink();
    const code = new URL(session.url).hash.replace('#code=', '');
    const entered = await service.request('POST', '/portal/session', { body: { code } });
    const cookie = (entered.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const page = await service.request('GET', '/portal/', { headers: { cookie } });
    const policy = page.headers.get('content-security-policy') ?? '';
    assert.match(policy, /default-src 'none'; script-src 'self'; style-src 'self'/);
    assert.ok(!policy.includes('unsafe'), policy);
    assert.match(policy, /frame-ancestors https:\/\/dashboard\.example\.com$/);
    assert.equal(page.headers.get('x-frame-options'), null);
    const anonymous = await service.request('GET', '/portal/');
    assert.match(anonymous.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    assert.equal(anonymous.headers.get('x-frame-options'), 'DENY');
    const script = /src="(\/portal\/assets\/[^"]+\.js)"/.exec(page.text)?.[1];
    assert.ok(script && !/<script>|style=/.test(page.text), 'nothing inline');
    const asset = await service.request('GET', script);
    assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.match(asset.headers.get('content-type') ?? '', /^text\/javascript/);
    for (const path of ['/portal/assets/..%2Fpackage.json', '/portal/assets/nothing.js'])
      assert.equal((await service.request('GET', path)).status, 404, path);
  });

  test('the theme is kept where it reads, and replaced where it would not (4.5:1)', async () => {
    const { session } = await projectWithLink({ primary: '#FFFF00', text: '#EEEEEE', background: '#FFFFFF' });
    const page = await browser.newPage();
    await page.goto(session.url);
    await page.getByRole('heading', { level: 1, name: 'Endpoints' }).waitFor();
    const colours = await page.evaluate(
      `['--primary', '--text', '--background'].map((name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim())`,
    );
    assert.deepEqual(
      colours,
      ['#1D4ED8', '#111827', '#FFFFFF'],
      'unreadable colours fall back to the defaults',
    );
    const kept = await projectWithLink({ primary: '#7C3AED', text: '#1F2937', background: '#FDF8F0' });
    await page.goto(kept.session.url);
    await page.getByRole('heading', { level: 1, name: 'Endpoints' }).waitFor();
    const primary = await page.evaluate(
      `getComputedStyle(document.documentElement).getPropertyValue('--primary').trim()`,
    );
    assert.equal(primary, '#7C3AED');
    await expectAccessible(page, 'a themed page');
  });
});
