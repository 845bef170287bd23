// The client's calls against a scripted HTTP server: idempotency keys, timeouts, which answers are retried
// and how long it waits, and aborts.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { PlatformClient, PlatformError } from '../src/index.ts';

type Script = (request: IncomingMessage, response: ServerResponse, index: number) => void;
const seen: IncomingMessage[] = [];
let script: Script = () => {};
const server = createServer((request, response) => {
  seen.push(request);
  script(request, response, seen.length - 1);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
after(() => {
  server.closeAllConnections();
  server.close();
});
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const client = new PlatformClient({ apiKey: 'pk_test_x', baseUrl, retryDelayMs: 5, timeoutMs: 200 });

function run(next: Script) {
  seen.length = 0;
  script = next;
}
const problem = (
  response: ServerResponse,
  status: number,
  code: string,
  headers: Record<string, string> = {},
) =>
  response
    .writeHead(status, {
      'content-type': 'application/problem+json',
      'x-request-id': `req-${status}`,
      ...headers,
    })
    .end(
      JSON.stringify({
        type: 'about:blank',
        title: code,
        status,
        detail: code.toLowerCase(),
        code,
        requestId: `req-${status}`,
      }),
    );
const ok = (response: ServerResponse, body: unknown) =>
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));

describe('the client’s transport', () => {
  test('a write carries an idempotency key, the same on each retry; a read carries none', async () => {
    run((_request, response, index) =>
      index < 2
        ? problem(response, 503, 'SERVICE_UNAVAILABLE')
        : ok(response, { eventId: 'e', deliveries: 0 }),
    );
    await client.events.publish({ type: 'pay.x.y', data: {} });
    const keys = seen.map((r) => r.headers['idempotency-key']);
    assert.equal(keys.length, 3);
    assert.match(keys[0] as string, /^[0-9a-f-]{36}$/);
    assert.deepEqual(new Set(keys).size, 1);
    assert.equal(seen[0]?.headers['x-api-key'], 'pk_test_x');
    assert.equal(seen[0]?.headers['content-type'], 'application/json');
    run((_request, response) => ok(response, {}));
    await client.events.publish({ type: 'pay.x.y', data: {} }, { idempotencyKey: 'mine-1' });
    await client.webhookEndpoints.update('e1', { active: true });
    await client.projects.me();
    assert.equal(seen[0]?.headers['idempotency-key'], 'mine-1');
    assert.equal(seen[1]?.headers['content-type'], 'application/merge-patch+json');
    assert.equal(seen[2]?.headers['idempotency-key'], undefined);
  });

  test('an attempt that does not answer in time is retried; one that never does ends as TIMEOUT', async () => {
    run((_request, response, index) =>
      index === 0 ? setTimeout(() => ok(response, {}), 1000) : ok(response, { id: 'p' }),
    );
    assert.deepEqual(await client.projects.me(), { id: 'p' });
    assert.equal(seen.length, 2);
    run(() => {});
    const failure = await client.projects.me({ maxRetries: 1 }).catch((error) => error);
    assert.ok(failure instanceof PlatformError);
    assert.deepEqual([failure.status, failure.code, seen.length], [0, 'TIMEOUT', 2]);
  });

  test('retry-after is waited for; one longer than the longest wait is not, nor are answers that are final', async () => {
    run((_request, response, index) =>
      index === 0
        ? problem(response, 409, 'IDEMPOTENCY_KEY_IN_PROGRESS', { 'retry-after': '1' })
        : ok(response, {}),
    );
    const started = performance.now();
    await client.webhookEndpoints.pause('e1');
    assert.ok(performance.now() - started >= 950);
    for (const [status, code, headers] of [
      [429, 'USAGE_LIMIT_EXCEEDED', { 'retry-after': '3600' }],
      [409, 'SLUG_TAKEN', {}],
      [422, 'IDEMPOTENCY_KEY_REUSED', {}],
      [500, 'INTERNAL', {}],
    ] as const) {
      run((_request, response) => problem(response, status, code, headers));
      const failure = await client.webhookEndpoints.pause('e1').catch((error) => error);
      assert.deepEqual(
        [failure.status, failure.code, failure.requestId, seen.length],
        [status, code, `req-${status}`, 1],
      );
    }
    run((_request, response) => problem(response, 503, 'SERVICE_UNAVAILABLE'));
    await client.projects.me().catch(() => {});
    assert.equal(seen.length, 3, 'the first attempt and two retries');
  });

  test('the caller’s abort ends the call at once, retries included', async () => {
    run((_request, response) => problem(response, 503, 'SERVICE_UNAVAILABLE', { 'retry-after': '5' }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 100);
    const slow = new PlatformClient({ apiKey: 'k', baseUrl, maxRetryDelayMs: 10_000 });
    await assert.rejects(slow.projects.me({ signal: controller.signal }), /stop/);
    assert.equal(seen.length, 1);
    assert.throws(() => new PlatformClient({ apiKey: 'k', baseUrl: 'ftp://x' }), /baseUrl/);
    assert.throws(() => new PlatformClient({ apiKey: '', baseUrl }), /apiKey/);
  });
});
