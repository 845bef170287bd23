// The gateway, exactly (contract 0.4): the upstream receives the raw path that matched, byte for byte,
// and a path any parser could read as another one is 404 before any upstream call. Every request here is
// written on a raw socket (a client's URL parser would normalise the very forms under test) to a
// recording upstream, on a non-idempotent and an idempotent route. Then the answer headers: recorded and
// replayed with an idempotent route's answer and sent with a relayed 409, 429 or 5xx; the headers a
// Connection header names removed in both directions; server-sent events streamed one by one.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { after, describe, test } from 'node:test';
import { startService } from './helpers/app.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}
const seen: Seen[] = [];
/** Resolved by the test once the client has read the first server-sent event. */
let firstEventRead: () => void = () => {};
let secondWrittenAfterFirstRead = false;

const upstream = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers });
    const path = (request.url ?? '').split('?')[0] as string;
    if (path === '/base/v1/events') return streamEvents(response);
    const status = Number(/^\/base\/v1\/status\/(\d{3})$/.exec(path)?.[1] ?? 0) || 201;
    response.writeHead(status, {
      'content-type': 'application/json',
      location: `/v1/items/${seen.length}`,
      etag: `"v${seen.length}"`,
      ratelimit: '"items";r=9;t=60',
      'x-product': 'kept',
      connection: 'keep-alive, x-hop',
      'x-hop': 'for this connection only',
    });
    response.end(JSON.stringify({ n: seen.length }));
  });
});

function streamEvents(response: import('node:http').ServerResponse) {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.write('data: first\n\n');
  const late = setTimeout(() => write(false), 3000);
  const write = (afterRead: boolean) => {
    clearTimeout(late);
    secondWrittenAfterFirstRead = afterRead;
    response.end('data: second\n\n');
  };
  firstEventRead = () => write(true);
}

await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
after(() => upstream.close());
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}/base/`;

const service = await startService({ env: { PLATFORM_RATE_LIMIT_PER_SECOND: '0' } });
await service.capability('exact', {
  upstream: upstreamUrl,
  manifest: {
    description: 'Paths as received',
    scopes: [{ name: 'exact:use', description: 'Use' }],
    metrics: [],
    eventTypes: [],
    providers: [],
    erasure: null,
    gateway: {
      routes: [
        { method: 'GET', path: '/v1/items/{id}', scope: 'exact:use', idempotent: false },
        { method: 'POST', path: '/v1/items/{id}', scope: 'exact:use', idempotent: true },
        { method: 'POST', path: '/v1/status/{code}', scope: 'exact:use', idempotent: true },
        { method: 'GET', path: '/v1/events', scope: 'exact:use', idempotent: false },
      ],
    },
  },
});
const tenant = await service.tenant(['exact:use']);
let keys = 0;

/** Forms of `{id}` forwarded as they are. */
const EXACT = [
  '42',
  'abc-DEF_1.2~x',
  'a.b',
  '...',
  '.hidden',
  '..a',
  'a..',
  '%20',
  'caf%C3%A9',
  'a%2Bb',
  'a+b',
  "a!$&'()*,=:@",
  '%41%42',
  '42?x=1&y=%2e%2e/../x',
];
/** Forms that some parser, framework or proxy could read as another path. */
const REFUSED = [
  '..\\..\\admin',
  '..',
  '.',
  '%2e%2e',
  '%2E%2E',
  '.%2e',
  '%2e.',
  '%2E.',
  '%2e',
  '%2E',
  '..%2f..%2fadmin',
  '..%2F..%2Fadmin',
  'a%2fb',
  'a%2Fb',
  'a\\b',
  '\\admin',
  'a%5cb',
  'a%5Cb',
  '..%5c..%5cadmin',
  '%2e%2e%5cadmin',
  'a;b',
  'a;jsessionid=1',
  '..;',
  'a%3bb',
  'a%zz',
  'a%',
  'a%2',
  'a%g0',
  'a%00',
  'a%0a',
  'a%0d%0a',
  'a%7f',
  'a%09',
  'a/',
  '/a',
  'a//b',
  'a#frag',
  '..%c0%af',
  '%c0%ae%c0%ae',
  '%EF%BC%8E%EF%BC%8E',
  'a%EF%BC%8Fb',
  '%ff',
];

describe('the gateway forwards exactly the path that matched', () => {
  for (const method of ['GET', 'POST']) {
    test(`${method} (${method === 'POST' ? 'idempotent' : 'streamed'}): ${EXACT.length} forms forwarded byte for byte, ${REFUSED.length} refused with 404 before any upstream call`, async () => {
      for (const form of EXACT) {
        const before = seen.length;
        const answer = await raw(method, `/exact/v1/items/${form}`);
        assert.match(answer, /^HTTP\/1\.1 20[01]/, `${form}: ${answer.slice(0, 200)}`);
        assert.equal(seen.length, before + 1, form);
        assert.equal(seen.at(-1)?.url, `/base/v1/items/${form}`, form);
      }
      const before = seen.length;
      for (const form of REFUSED) {
        const answer = await raw(method, `/exact/v1/items/${form}`);
        assert.match(answer, /^HTTP\/1\.1 404 /, `${form}: ${answer.slice(0, 200)}`);
        assert.match(answer, /"code":"NOT_FOUND"/, form);
      }
      assert.deepEqual(
        seen.slice(before).map((s) => s.url),
        [],
        'nothing refused reached the upstream',
      );
    });
  }

  test('bytes no path may hold are refused by the parser (400 MALFORMED_REQUEST), never forwarded', async () => {
    const before = seen.length;
    for (const form of ['a b', 'a\x01b', 'a\x7fb', 'caf\u00e9']) {
      const answer = await raw('GET', `/exact/v1/items/${form}`);
      assert.match(answer, /^HTTP\/1\.1 400 /, JSON.stringify(form));
      assert.match(answer, /"code":"MALFORMED_REQUEST"/, JSON.stringify(form));
    }
    assert.equal(seen.length, before);
  });
});

describe('answer headers', () => {
  test('an idempotent route records its end-to-end headers and replays them; a relayed 409, 429 or 5xx has them', async () => {
    const key = `headers-${++keys}`;
    const first = parse(await raw('POST', '/exact/v1/items/7', { 'idempotency-key': key }));
    const again = parse(await raw('POST', '/exact/v1/items/7', { 'idempotency-key': key }));
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    for (const answer of [first, again]) {
      assert.equal(answer.headers.location, first.headers.location);
      assert.match(answer.headers.location ?? '', /^\/v1\/items\/\d+$/);
      assert.match(answer.headers.etag ?? '', /^"v\d+"$/);
      assert.equal(answer.headers.ratelimit, '"items";r=9;t=60');
      assert.equal(answer.headers['x-product'], 'kept');
      assert.equal(answer.headers['x-hop'], undefined, 'named in the upstream’s Connection header');
      assert.equal(answer.body, first.body);
    }
    for (const code of ['409', '429', '500', '503']) {
      const relayed = parse(
        await raw('POST', `/exact/v1/status/${code}`, { 'idempotency-key': `s-${++keys}` }),
      );
      assert.equal(String(relayed.status), code);
      assert.equal(relayed.headers['x-product'], 'kept', code);
      assert.match(relayed.headers.etag ?? '', /^"v\d+"$/, code);
      assert.equal(relayed.headers['x-hop'], undefined, code);
    }
  });

  test('headers named in Connection are removed in both directions', async () => {
    const answer = parse(
      await raw('GET', '/exact/v1/items/9', {
        connection: 'close, x-hop-in',
        'x-hop-in': 'no',
        'x-end': 'yes',
      }),
    );
    assert.equal(answer.status, 201);
    assert.equal(seen.at(-1)?.headers['x-hop-in'], undefined);
    assert.equal(seen.at(-1)?.headers['x-end'], 'yes');
    assert.equal(answer.headers['x-hop'], undefined);
    assert.equal(answer.headers['x-product'], 'kept');
  });
});

describe('streaming', () => {
  test('server-sent events reach the client one by one', async () => {
    const response = await fetch(`${service.baseUrl}/exact/v1/events`, {
      headers: { 'x-api-key': tenant.key },
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('data: first\n\n')) {
      const { value, done } = await reader.read();
      assert.ok(!done, 'the stream ended before its first event arrived');
      text += decoder.decode(value, { stream: true });
    }
    assert.ok(!text.includes('second'), 'the first event came alone');
    firstEventRead();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    assert.equal(text, 'data: first\n\ndata: second\n\n');
    assert.ok(
      secondWrittenAfterFirstRead,
      'the upstream wrote the second event only after the first was read',
    );
  });
});

/** A request written as is on a socket: its raw target, the tenant's key, any headers; the whole answer. */
function raw(method: string, target: string, headers: Record<string, string> = {}): Promise<string> {
  const url = new URL(service.baseUrl);
  const lines = [`${method} ${target} HTTP/1.1`, `host: ${url.host}`, `x-api-key: ${tenant.key}`];
  if (method === 'POST' && !headers['idempotency-key']) headers['idempotency-key'] = `raw-${++keys}`;
  for (const [name, value] of Object.entries({ connection: 'close', ...headers }))
    lines.push(`${name}: ${value}`);
  if (method === 'POST') lines.push('content-type: application/json', 'content-length: 2');
  const request = Buffer.from(`${lines.join('\r\n')}\r\n\r\n${method === 'POST' ? '{}' : ''}`, 'latin1');
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (data: Buffer) => chunks.push(data));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', (error) =>
      chunks.length ? resolve(Buffer.concat(chunks).toString('latin1')) : reject(error),
    );
  });
}

/** A raw answer's status, headers (lowercase names) and body. */
function parse(answer: string) {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}
