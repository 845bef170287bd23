// The built client (packages/client/dist, as npm ci builds it) in a real browser: Chromium loads it as
// an ES module from a page of one origin that also passes /core/v1 to the service, and a program there
// creates an endpoint, publishes, pages through the deliveries and meets a typed error.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer, request as forward } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { startService } from './helpers/app.ts';
import { startBrowser } from './helpers/browser.ts';
import { startReceiver } from './helpers/receiver.ts';

const DIST = new URL('../packages/client/dist/', import.meta.url);
const service = await startService({
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100' },
  worker: true,
});
const tenant = await service.tenant();
const target = new URL(service.baseUrl);

const PAGE = `<!doctype html><meta charset="utf-8"><title>client</title>
<script type="module">
import { PlatformClient, PlatformError } from '/client/index.js';
const client = new PlatformClient({ apiKey: new URLSearchParams(location.search).get('key'), baseUrl: location.origin });
window.run = async (receiver) => {
  const endpoint = await client.webhookEndpoints.create({ url: receiver, eventTypes: ['*'] });
  const published = await client.events.publish({ type: 'pay.payment.succeeded', data: { amount: 1 } });
  await client.events.publish({ type: 'pay.payment.succeeded', data: { amount: 2 } });
  const states = [];
  for await (const delivery of client.webhookEndpoints.iterateDeliveries(endpoint.id, { limit: 1 })) states.push(delivery.eventId);
  const missing = await client.events.get('0193b0a4-1e0b-7d4e-9f10-a1b2c3d4e5f6').catch((error) => error);
  return { secret: endpoint.secret, published: published.eventId, pages: states.length,
    error: missing instanceof PlatformError ? [missing.status, missing.code] : String(missing) };
};
</script>`;

// One origin for the page, the client's modules and the API (the service sends no CORS headers).
const origin = createServer(async (request, response) => {
  const url = new URL(request.url ?? '/', 'http://x');
  if (url.pathname === '/') return response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  if (url.pathname.startsWith('/client/')) {
    const file = url.pathname.slice('/client/'.length);
    const body = /^[\w.-]+\.js$/.test(file)
      ? await readFile(new URL(file, DIST)).catch(() => undefined)
      : undefined;
    if (!body) return response.writeHead(404).end();
    return response.writeHead(200, { 'content-type': 'text/javascript' }).end(body);
  }
  const upstream = forward(
    {
      host: target.hostname,
      port: target.port,
      path: request.url,
      method: request.method,
      headers: request.headers,
    },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    },
  );
  request.pipe(upstream);
});
await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
after(() => {
  origin.closeAllConnections();
  origin.close();
});

describe('the client in a browser', () => {
  test('the built ES module runs in Chromium: writes with keys, iterates pages, throws PlatformError', async () => {
    const receiver = await startReceiver();
    const browser = await startBrowser();
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(origin.address() as AddressInfo).port}/?key=${tenant.key}`);
    await page.waitForFunction('typeof window.run === "function"');
    const result = (await page.evaluate(`window.run(${JSON.stringify(receiver.url)})`)) as {
      secret: string;
      published: string;
      pages: number;
      error: unknown;
    };
    assert.match(result.secret, /^whsec_/);
    assert.equal(result.pages, 2, 'two deliveries, a page of one at a time');
    assert.deepEqual(result.error, [404, 'NOT_FOUND']);
    await receiver.waitFor(2);
    const keys = await service.db.query(
      'select count(*)::int as n from idempotency_keys where project_id = $1',
      [tenant.projectId],
    );
    assert.equal(keys.rows[0]?.n, 3, 'each write carried its own idempotency key');
  });
});
