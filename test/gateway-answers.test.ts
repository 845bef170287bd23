// The gateway reading its upstream's answer (http/gateway-upstream.ts), through HTTP against a real
// upstream on loopback: a small answer read whole, a large or unsized one streamed byte for byte; an
// idempotent route's answer read whole and bounded (413 past 1 MiB, 502 when it breaks off, 504 when it
// stalls); a client that goes away mid-stream stops the upstream's answer.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import { after, describe, test } from 'node:test';
import { expectProblem, startService } from './helpers/app.ts';
import { eventually } from './helpers/receiver.ts';

const LARGE = Buffer.alloc(300 * 1024);
for (let i = 0; i < LARGE.length; i++) LARGE[i] = (i * 7919) % 251;
const digest = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let brokenCalls = 0;
/** The upstream's answer in flight to the client that went away: whether it was cut short. */
let dripping: { response: ServerResponse; closedEarly: boolean } | undefined;

const upstream = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    const path = request.url?.split('?')[0];
    if (path === '/v1/sized') return response.writeHead(200, { 'content-length': LARGE.length }).end(LARGE);
    if (path === '/v1/unsized') {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      for (let at = 0; at < LARGE.length; at += 10_000) response.write(LARGE.subarray(at, at + 10_000));
      return response.end();
    }
    if (path === '/v1/huge') return response.writeHead(201).end(Buffer.alloc(1024 * 1024 + 1, 'h'));
    if (path === '/v1/broken') {
      brokenCalls++;
      response.writeHead(201, { 'content-length': 1000 });
      response.write('x'.repeat(100));
      return setTimeout(() => response.socket?.destroy(), 20);
    }
    if (path === '/v1/stalled') {
      response.writeHead(201, { 'content-length': 1000 });
      return response.write('x'.repeat(100)); // and never more
    }
    if (path === '/v1/drip') {
      const drip = { response, closedEarly: false };
      dripping = drip;
      response.on('close', () => {
        drip.closedEarly = !response.writableFinished;
      });
      response.writeHead(200, { 'content-type': 'text/plain' });
      let sent = 0;
      const timer = setInterval(() => {
        if (response.destroyed || sent === 500) {
          clearInterval(timer);
          response.end();
        } else response.write(`chunk ${sent++}\n`);
      }, 20);
      return;
    }
    response.writeHead(404).end();
  });
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
after(() => upstream.close());

const service = await startService({
  env: { PLATFORM_RATE_LIMIT_PER_SECOND: '0', PLATFORM_GATEWAY_TIMEOUT_MS: '500' },
});
const route = (method: string, path: string, idempotent: boolean) => ({
  method,
  path,
  scope: 'ans:use',
  idempotent,
});
await service.capability('ans', {
  upstream: `http://127.0.0.1:${(upstream.address() as { port: number }).port}`,
  manifest: {
    description: 'Answers of every size',
    scopes: [{ name: 'ans:use', description: 'Use' }],
    metrics: [],
    eventTypes: [],
    providers: [],
    erasure: null,
    gateway: {
      routes: [
        route('GET', '/v1/sized', false),
        route('GET', '/v1/unsized', false),
        route('GET', '/v1/drip', false),
        route('POST', '/v1/sized', true),
        route('POST', '/v1/huge', true),
        route('POST', '/v1/broken', true),
        route('POST', '/v1/stalled', true),
      ],
    },
  },
});
const tenant = await service.tenant(['ans:use']);
let n = 0;
const post = (path: string, key = `ans-${++n}`) =>
  service.request('POST', `/ans${path}`, { key: tenant.key, headers: { 'idempotency-key': key } });

describe('the gateway reads its upstream’s answer', () => {
  test('larger than a small answer, with a length or without: streamed, byte for byte', async () => {
    for (const path of ['/v1/sized', '/v1/unsized']) {
      const answer = await fetch(`${service.baseUrl}/ans${path}`, { headers: { 'x-api-key': tenant.key } });
      assert.equal(answer.status, 200, path);
      assert.equal(digest(Buffer.from(await answer.arrayBuffer())), digest(LARGE), path);
    }
  });

  test('an idempotent route reads its answer whole: recorded, then replayed byte for byte', async () => {
    const first = await post('/v1/sized', 'ans-whole');
    assert.equal(first.status, 200);
    assert.equal(first.text, LARGE.toString());
    const replay = await post('/v1/sized', 'ans-whole');
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.text, first.text);
  });

  test('an idempotent route’s answer past 1 MiB is 413; one that breaks off 502; one that stalls 504', async () => {
    expectProblem(await post('/v1/huge'), 413, 'PAYLOAD_TOO_LARGE');
    const broken = await post('/v1/broken', 'ans-broken');
    expectProblem(broken, 502, 'UPSTREAM_UNAVAILABLE');
    assert.match(broken.body.detail, /broke off its answer/);
    // Not recorded: the same key calls the upstream again.
    const again = await post('/v1/broken', 'ans-broken');
    expectProblem(again, 502, 'UPSTREAM_UNAVAILABLE');
    assert.equal(again.headers.get('idempotent-replayed'), null);
    assert.equal(brokenCalls, 2, 'the upstream was called again');
    expectProblem(await post('/v1/stalled'), 504, 'UPSTREAM_TIMEOUT');
  });

  test('a client that goes away mid-stream stops the upstream’s answer', async () => {
    const controller = new AbortController();
    const answer = await fetch(`${service.baseUrl}/ans/v1/drip`, {
      headers: { 'x-api-key': tenant.key },
      signal: controller.signal,
    });
    const reader = (answer.body as ReadableStream<Uint8Array>).getReader();
    assert.match(new TextDecoder().decode((await reader.read()).value), /^chunk 0/);
    controller.abort();
    const cut = await eventually(
      async () => dripping?.response.destroyed && dripping.closedEarly,
      5000,
      'the upstream’s answer closed before it was written whole',
    );
    assert.equal(cut, true);
  });
});
