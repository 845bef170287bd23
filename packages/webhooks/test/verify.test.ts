// verifyWebhook against signatures made by the independent Standard Webhooks library, and every way a
// delivery can be wrong.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError } from '../src/index.ts';

const secret = () => `whsec_${randomBytes(24).toString('base64')}`;
const body = JSON.stringify({
  id: 'evt-1',
  type: 'pay.payment.succeeded',
  timestamp: '2026-11-24T09:30:00Z',
  data: { amount: 4200, note: 'héllo ✓' },
});

function signed(secrets: string[], at = new Date(), payload = body) {
  const signatures = secrets.map((s) => new Webhook(s).sign('evt-1', at, payload));
  return {
    'webhook-id': 'evt-1',
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}

describe('verifyWebhook', () => {
  test('accepts what the reference library signs, from a string, bytes or a buffer, with Headers or a record', async () => {
    const key = secret();
    const headers = signed([key]);
    const event = await verifyWebhook(body, headers, key);
    assert.deepEqual(event, JSON.parse(body));
    assert.deepEqual(await verifyWebhook(Buffer.from(body), new Headers(headers), [key]), event);
    assert.deepEqual(await verifyWebhook(new TextEncoder().encode(body).buffer, headers, [key]), event);
    assert.deepEqual(await verifyWebhook(body, { ...headers, 'webhook-id': ['evt-1'] }, [key]), event);
  });

  test('any of several secrets, and any of several signatures (a rotation)', async () => {
    const [old, current, other] = [secret(), secret(), secret()];
    const headers = signed([current, old]);
    assert.ok(await verifyWebhook(body, headers, [old]));
    assert.ok(await verifyWebhook(body, headers, [other, current]));
    await assert.rejects(verifyWebhook(body, headers, [other]), /no signature matches/);
  });

  test('refuses a changed body, a stale or future timestamp, missing headers, and unusable secrets', async () => {
    const key = secret();
    const headers = signed([key]);
    const refused = (promise: Promise<unknown>, message: RegExp) =>
      assert.rejects(
        promise,
        (error: Error) => error instanceof WebhookVerificationError && message.test(error.message),
      );
    await refused(verifyWebhook(body.replace('4200', '4201'), headers, key), /no signature matches/);
    const old = signed([key], new Date(Date.now() - 301_000));
    await refused(verifyWebhook(body, old, key), /outside the tolerance/);
    assert.ok(await verifyWebhook(body, old, key, { toleranceSeconds: 600 }));
    await refused(
      verifyWebhook(body, signed([key], new Date(Date.now() + 400_000)), key),
      /outside the tolerance/,
    );
    await refused(verifyWebhook(body, { ...headers, 'webhook-signature': undefined }, key), /missing/);
    await refused(verifyWebhook(body, { ...headers, 'webhook-timestamp': '12a' }, key), /not a number/);
    await refused(
      verifyWebhook(body, { ...headers, 'webhook-signature': 'v2,abc v1,@@@' }, key),
      /no signature/,
    );
    await refused(verifyWebhook(body, headers, []), /no secret/);
    await refused(verifyWebhook(body, headers, 'whsec_%%%'), /not whsec_ and base64/);
    const text = 'not json';
    await refused(verifyWebhook(text, signed([key], new Date(), text), key), /not JSON/);
  });
});
