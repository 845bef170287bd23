// The gateway, through HTTP against a real upstream on loopback: a capability's declared routes served at
// /<capability>/v1/… with Core's key, scope, idempotency and daily-limit rules; the signed context headers
// (checked here by an independent HMAC); what is never forwarded (the key, cookies, forged x-platform-*
// headers, hop-by-hop headers, set-cookie back); bodies streamed both ways and bounded; 404 for anything
// undeclared or that would leave /<capability>/v1/ once normalised; 502 and 504 as problems.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { after, describe, test } from 'node:test';
import { expectProblem, startService } from './helpers/app.ts';
import { expectedSignature } from './helpers/gateway.ts';
import { countOf } from './helpers/usage.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  bytes: number;
}
const seen: Seen[] = [];
const upstream = createServer((request, response) => {
  let bytes = 0;
  request.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  request.on('end', () => {
    seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, bytes });
    const path = request.url?.split('?')[0];
    if (path === '/base/v1/slow') return setTimeout(() => response.end('late'), 2000);
    if (path === '/base/v1/fail') return response.writeHead(503).end('{"error":"down"}');
    if (path === '/base/v1/stream') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < 64; i++) response.write('x'.repeat(1024));
      return response.end();
    }
    response.writeHead(request.method === 'POST' ? 201 : 200, {
      'content-type': 'application/json',
      'set-cookie': 'upstream=1',
      'x-upstream': 'yes',
      'keep-alive': 'timeout=5',
    });
    response.end(JSON.stringify({ path: request.url, n: seen.length, bytes }));
  });
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
after(() => upstream.close());
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}/base`;

const service = await startService({
  env: { PLATFORM_RATE_LIMIT_PER_SECOND: '0', PLATFORM_GATEWAY_TIMEOUT_MS: '500' },
});
const operator = await service.operator();
const manifest = (routes: object[]) => ({
  description: 'Behind the gateway',
  scopes: [
    { name: 'gw:read', description: 'Read' },
    { name: 'gw:send', description: 'Send' },
  ],
  metrics: [{ name: 'messages', description: 'Messages sent', defaultDailyLimit: 3 }],
  eventTypes: [],
  providers: [],
  erasure: null,
  gateway: { routes },
});
const ROUTES = [
  { method: 'GET', path: '/v1/messages/{id}', scope: 'gw:read', idempotent: false },
  { method: 'POST', path: '/v1/messages', scope: 'gw:send', idempotent: true, metric: 'messages' },
  { method: 'POST', path: '/v1/fail', scope: 'gw:send', idempotent: true },
  { method: 'POST', path: '/v1/stream', scope: 'gw:send', idempotent: false },
  { method: 'GET', path: '/v1/slow', scope: 'gw:read', idempotent: false },
];
const gw = await service.capability('gw', { upstream: upstreamUrl, manifest: manifest(ROUTES) });
const tenant = await service.tenant(['gw:read', 'gw:send', 'usage:read']);
let n = 0;

const call = (
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
) =>
  service.request(method, path, {
    key: options.key ?? tenant.key,
    body: options.body,
    headers: { ...(method === 'POST' ? { 'idempotency-key': `gw-${++n}` } : {}), ...options.headers },
  });

describe('the gateway', () => {
  test('a declared route is forwarded with the signed context; the key, cookies and forged headers stay behind', async () => {
    const answer = await call('GET', '/gw/v1/messages/42?x=1&y=%20', {
      headers: { cookie: 'platform_portal=abc', 'x-platform-project-id': 'forged', 'x-custom': 'kept' },
    });
    assert.equal(answer.status, 200, answer.text);
    const forwarded = seen.at(-1) as Seen;
    assert.equal(forwarded.url, '/base/v1/messages/42?x=1&y=%20');
    assert.equal(forwarded.headers['x-platform-project-id'], tenant.projectId);
    assert.equal(forwarded.headers['x-platform-key-id'], tenant.keyId);
    assert.equal(forwarded.headers['x-platform-scopes'], 'gw:read,gw:send,usage:read');
    assert.equal(forwarded.headers['x-platform-request-id'], answer.headers.get('x-request-id'));
    assert.ok(Math.abs(Number(forwarded.headers['x-platform-timestamp']) - Date.now() / 1000) < 5);
    assert.equal(
      forwarded.headers['x-platform-signature'],
      expectedSignature(gw.signingSecret, forwarded.headers, 'GET', '/base/v1/messages/42?x=1&y=%20'),
    );
    assert.equal(forwarded.headers['x-custom'], 'kept');
    for (const header of ['x-api-key', 'cookie']) assert.equal(forwarded.headers[header], undefined, header);
    assert.equal(answer.headers.get('x-upstream'), 'yes');
    assert.equal(answer.headers.get('set-cookie'), null);
    assert.notEqual(answer.headers.get('keep-alive'), 'timeout=5', 'the upstream’s own hop-by-hop header');
  });

  test('refused before the upstream: no key, wrong key kinds, a missing scope; 404 for anything undeclared', async () => {
    const before = seen.length;
    expectProblem(await service.request('GET', '/gw/v1/messages/1'), 401, 'API_KEY_MISSING');
    const reader = await service.tenant(['gw:read']);
    expectProblem(
      await call('POST', '/gw/v1/messages', { key: reader.key, body: {} }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    expectProblem(await call('GET', '/gw/v1/messages/1', { key: operator.key }), 403, 'INSUFFICIENT_SCOPE');
    expectProblem(await call('GET', '/gw/v1/messages/1', { key: gw.key }), 403, 'INSUFFICIENT_SCOPE');
    for (const path of [
      '/gw/v1/undeclared',
      '/gw/v1/messages/1/2',
      '/gw/v1/messages/..%2F..%2Fadmin',
      '/gw/v1/messages/%2e%2e',
      '/gw/v2/messages/1',
      '/nowhere/v1/messages/1',
      '/core/v1/nothing-here',
    ]) {
      expectProblem(await service.request('GET', path), 404, 'NOT_FOUND');
    }
    expectProblem(await call('DELETE', '/gw/v1/messages/1'), 404, 'NOT_FOUND');
    // Dot segments as sent (a client's URL parser would remove them first).
    for (const path of [
      '/gw/v1/../v1/messages/1',
      '/gw/v1/messages/../../../admin/v1/audit',
      '/gw/v1/./messages/1',
    ])
      assert.match(await raw(`GET ${path} HTTP/1.1\r\nx-api-key: ${tenant.key}`), /^HTTP\/1\.1 404/, path);
    assert.equal(seen.length, before, 'nothing reached the upstream');
  });

  test('an idempotent route: the answer recorded and replayed; another body 422; a 5xx not recorded', async () => {
    const before = seen.length;
    expectProblem(
      await service.request('POST', '/gw/v1/messages', { key: tenant.key, body: { to: 'a' } }),
      400,
      'IDEMPOTENCY_KEY_MISSING',
    );
    const send = (body: unknown) =>
      service.request('POST', '/gw/v1/messages', {
        key: tenant.key,
        body,
        headers: { 'idempotency-key': 'once' },
      });
    const first = await send({ to: 'ada' });
    assert.equal(first.status, 201, first.text);
    const again = await send({ to: 'ada' });
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);
    expectProblem(await send({ to: 'grace' }), 422, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(seen.length, before + 1, 'the upstream was called once');

    const fail = () =>
      service.request('POST', '/gw/v1/fail', {
        key: tenant.key,
        body: {},
        headers: { 'idempotency-key': 'f' },
      });
    assert.equal((await fail()).status, 503);
    assert.equal((await fail()).status, 503);
    assert.equal(seen.length, before + 3, 'a 5xx is not recorded: the key works again');
  });

  test('a route with a metric: the daily limit checked before, one unit counted after a 2xx', async () => {
    const counted = await service.tenant(['gw:send', 'usage:read']);
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await call('POST', '/gw/v1/messages', { key: counted.key, body: { i } })).status);
    assert.deepEqual(statuses, [201, 201, 201, 429]);
    await service.context.meter.flush();
    const usage = await service.request('GET', '/core/v1/usage', { key: counted.key });
    assert.equal(countOf(usage.body.data, 'gw', 'messages'), 3, JSON.stringify(usage.body));
  });

  test('bodies stream both ways, up to 1 MiB; larger is 413', async () => {
    const body = { blob: 'y'.repeat(512 * 1024) };
    const answer = await call('POST', '/gw/v1/stream', { body });
    assert.equal(answer.status, 200);
    assert.equal(answer.text.length, 64 * 1024);
    assert.equal((seen.at(-1) as Seen).bytes, JSON.stringify(body).length);
    const huge = await call('POST', '/gw/v1/stream', { body: { blob: 'z'.repeat(1024 * 1024 + 1) } });
    expectProblem(huge, 413, 'PAYLOAD_TOO_LARGE');
    // Chunked, without a length: cut at the limit.
    const chunked = await rawChunkedPost('/gw/v1/stream', 1100 * 1024);
    assert.match(chunked, /^HTTP\/1\.1 413/);
  });

  test('an upstream that does not answer in time is 504; one that cannot be reached is 502', async () => {
    expectProblem(await call('GET', '/gw/v1/slow'), 504, 'UPSTREAM_TIMEOUT');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    await service.capability('gone', {
      upstream: `http://127.0.0.1:${port}`,
      manifest: {
        ...manifest([{ method: 'GET', path: '/v1/messages/{id}', scope: 'gone:read', idempotent: false }]),
        scopes: [{ name: 'gone:read', description: 'Read' }],
      },
    });
    const goneKey = (await service.tenant(['gone:read'])).key;
    expectProblem(await call('GET', '/gone/v1/messages/1', { key: goneKey }), 502, 'UPSTREAM_UNAVAILABLE');
  });
});

/** A POST with a chunked body of `size` bytes, over a raw socket: the answer. */
function rawChunkedPost(path: string, size: number): Promise<string> {
  const chunk = Buffer.alloc(64 * 1024, 'c');
  const chunks: string[] = [];
  for (let sent = 0; sent < size; sent += chunk.length)
    chunks.push(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
  return raw(
    `POST ${path} HTTP/1.1\r\nx-api-key: ${tenant.key}\r\ncontent-type: application/octet-stream\r\ntransfer-encoding: chunked`,
    `${chunks.join('')}0\r\n\r\n`,
  );
}

/** A request written as is on a socket (its request line and headers, then a body): the answer. */
function raw(head: string, body = ''): Promise<string> {
  const url = new URL(service.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(`${head}\r\nhost: ${url.host}\r\nconnection: close\r\n\r\n${body}`);
    });
    let answer = '';
    socket.on('data', (data) => {
      answer += data;
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', (error) => (answer ? resolve(answer) : reject(error)));
  });
}
