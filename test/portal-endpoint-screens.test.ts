// An endpoint's screens in the portal, in Chromium against the real service and receivers on loopback:
// editing an endpoint in one form (a refusal said beside its field), a disabled endpoint enabled again,
// an example of a catalogue type sent and seen arriving, the project's event log with its filters, and a
// message found by the webhook-id its receiver got. In English and French, at 390 and 1280 px, each on a
// project of its own, with axe and no sideways page; screenshots under test-results/portal/.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { check, everywhere, good, idem, open, say, service } from './helpers/portal-screens.ts';
import { eventually } from './helpers/receiver.ts';

describe('an endpoint’s screens in the portal', () => {
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
      // The form empties the field once it has the save's answer, which may come after the API shows the
      // change: typed before then, the next line would be wiped and never checked.
      await eventually(
        async () => (await page.getByLabel(say(language, 'receiver.headers')).inputValue()) === '',
        10_000,
        'the saved form',
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
