// examples/client: each script run as a user runs it (node examples/client/src/X.ts …), against a real
// service with a worker and a real receiver on loopback; what it prints is what the service did.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { startService } from './helpers/app.ts';
import { answerWith, eventually, startReceiver } from './helpers/receiver.ts';

const service = await startService({
  worker: true,
  env: {
    PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
    PLATFORM_WORKER_POLL_MS: '100',
    PLATFORM_RETRY_SCHEDULE: '0',
  },
});
const tenant = await service.tenant();

async function script(name: string, ...args: string[]) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [`examples/client/src/${name}.ts`, ...args],
    { env: { ...process.env, PLATFORM_URL: service.baseUrl, PLATFORM_API_KEY: tenant.key }, timeout: 30_000 },
  );
  return stdout;
}

describe('examples/client', () => {
  test('declare a type, create an endpoint (a test event sent), publish, read the deliveries', async () => {
    const receiver = await startReceiver();
    assert.match(
      await script('declare-event-type'),
      /declared pay\.payment\.succeeded: A payment was captured/,
    );
    const created = await script('create-endpoint', receiver.url, 'pay.*');
    const endpointId = /endpoint ([0-9a-f-]{36}) for pay\.\*/.exec(created)?.[1] ?? '';
    assert.match(created, /signing secret, shown only now; give it to the receiver: whsec_/);
    assert.match(created, /sent a core\.webhook\.test event/);
    assert.match(
      await script('publish', 'pay.payment.succeeded', '{"amount": 4200, "currency": "EUR"}', 'order-42'),
      /event \S+: 1 delivery\(ies\)/,
    );
    // The same idempotency key publishes once.
    await script('publish', 'pay.payment.succeeded', '{"amount": 4200, "currency": "EUR"}', 'order-42');
    await receiver.waitFor(2);
    const types = receiver.received.map((r) => JSON.parse(r.body).type).sort();
    assert.deepEqual(types, ['core.webhook.test', 'pay.payment.succeeded']);
    const listed = await script('deliveries', endpointId);
    assert.match(listed, /pay\.payment\.succeeded {2}delivered {2}204/);
    assert.match(listed, /core\.webhook\.test {2}delivered {2}204/);
  });

  test('data that breaks the schema is refused, member by member, with exit code 1', async () => {
    const failed = await script('publish', 'pay.payment.succeeded', '{"amount": "4200"}').catch((e) => e);
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /400 VALIDATION_FAILED/);
    assert.match(failed.stderr, /\/data\/amount: /);
  });

  test('dead deliveries: retried one by one, or recovered since a time as a job', async () => {
    const receiver = await startReceiver(answerWith(500));
    const created = await script('create-endpoint', receiver.url, 'shop.*');
    const endpointId = /endpoint ([0-9a-f-]{36})/.exec(created)?.[1] ?? '';
    const since = new Date(Date.now() - 60_000).toISOString();
    await script('publish', 'shop.order.placed', '{"order": 1}');
    await eventually(async () => {
      const page = await service.request('GET', `/core/v1/webhook-endpoints/${endpointId}/deliveries`, {
        key: tenant.key,
      });
      const states = page.body.data.map((d: { state: string }) => d.state);
      return (states.length === 2 && states.every((state: string) => state === 'dead')) || undefined;
    });
    const recovered = await script('recover', endpointId, since);
    assert.match(recovered, /^2 event\(s\) to send again/); // the test event and the order
    assert.match(recovered, /job \S+: done, 2 of 2/);
    assert.match(
      await script('deliveries', endpointId, '--retry-dead'),
      /shop\.order\.placed {2}dead {2}500\n {2}retried as delivery/,
    );
  });

  test('usage against the limits, a portal link, an erasure', async () => {
    assert.match(await script('usage'), /core\/events_published: \d+ of 100000 today/);
    assert.match(await script('portal-link', 'en'), /^http:\/\/127\.0\.0\.1:\d+\/portal\/enter#code=/);
    assert.match(
      await script('erase', 'ada@example.com'),
      /erasure \S+: complete\n {2}core: complete, 0 erased/,
    );
  });
});
