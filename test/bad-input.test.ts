// Bad input at every layer gets a PlatformError with the right status and code, never a 500 or a stack:
// Node's HTTP parser (raw sockets), Fastify's router, the body parser (nesting, content types, sizes),
// and the routes' own checks, on every route of test/helpers/routes.ts that takes a body or an id.
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
import { MAX_BODY_DEPTH } from '../src/http/body.ts';
import { expectProblem, startService } from './helpers/app.ts';
import {
  bodyOf,
  everyId,
  kindOf,
  pathOf,
  type Route,
  TEST_CAPABILITY,
  TEST_MANIFEST,
  WITH_BODY,
  WITH_ID,
} from './helpers/routes.ts';

// Every route's refusals, in bursts of hundreds of requests from one key: no request rate limit, so
// that a refusal is the one the input earns, never a 429.
const service = await startService({
  resolve: async () => ['93.184.216.34'],
  env: { PLATFORM_RATE_LIMIT_PER_SECOND: '0' },
});
const tenant = await service.tenant();
const operator = await service.operator();
let n = 0;
const idem = () => ({ 'idempotency-key': `bad-${++n}` });
const endpoint = (
  await service.request('POST', '/core/v1/webhook-endpoints', {
    key: tenant.key,
    body: { url: 'https://hooks.example.com/', eventTypes: ['*'] },
    headers: idem(),
  })
).body.id as string;
const event = (
  await service.request('POST', '/core/v1/events', {
    key: tenant.key,
    body: { type: 'pay.payment.succeeded', data: {} },
    headers: idem(),
  })
).body.eventId as string;

const capability = await service.capability(TEST_CAPABILITY, { manifest: TEST_MANIFEST });
// The route list's capability reads across projects too (GET /capability/v1/projects needs the grant).
await service.db.query(`update capabilities set grants = '{projects:read}' where name = $1`, [
  TEST_CAPABILITY,
]);
await service.context.directory.refresh();
const reservation = (
  await service.request('POST', '/capability/v1/reservations', {
    key: capability.key,
    body: { projectId: tenant.projectId, metric: 'units', amount: 5 },
    headers: idem(),
  })
).body.id as string;
const ids = {
  erasure: await service.erasureWithTask(tenant, TEST_CAPABILITY),
  id: endpoint,
  event,
  project: tenant.projectId,
  key: tenant.keyId,
  capability: TEST_CAPABILITY,
  reservation,
};
const KEYS = { project: tenant.key, operator: operator.key, capability: capability.key };
const keyFor = (route: Route) => KEYS[kindOf(route)];

/** Objects nested `depth` levels deep, innermost {"a":1}. */
const nested = (depth: number) => `${'{"a":'.repeat(depth - 1)}{"a":1}${'}'.repeat(depth - 1)}`;

/** Sends raw bytes and resolves with the whole answer (the connection is closed by the server). */
function raw(
  bytes: string | Buffer,
): Promise<{ status: number; headers: Record<string, string>; body: any }> {
  return new Promise((resolve, reject) => {
    const { port } = new URL(service.baseUrl);
    const socket = net.connect(Number(port), '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = body;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: parsed });
    });
    socket.write(bytes);
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
  });
}

function expectRawProblem(answer: Awaited<ReturnType<typeof raw>>, status: number, code: string) {
  assert.equal(answer.status, status, JSON.stringify(answer));
  assert.equal(answer.headers['content-type'], 'application/problem+json');
  assert.equal(answer.body.code, code);
  assert.equal(answer.body.status, status);
  assert.ok(answer.headers['x-request-id'], 'an x-request-id');
  assert.equal(answer.body.requestId, answer.headers['x-request-id']);
}

describe('bad input', () => {
  test(`bodies nested past ${MAX_BODY_DEPTH} levels → 400 on every route with a body; at the limit, accepted`, async () => {
    for (const route of WITH_BODY) {
      const path = pathOf(route, ids);
      for (const depth of [MAX_BODY_DEPTH + 1, 3000, 20_000]) {
        const response = await service.request(route.method, path, {
          key: keyFor(route),
          rawBody: `{"x":${nested(depth - 1)}}`,
          headers: { 'content-type': 'application/json', ...idem() },
        });
        expectProblem(response, 400, 'VALIDATION_FAILED');
        assert.match(response.body.detail, new RegExp(`nests deeper than ${MAX_BODY_DEPTH} levels`));
      }
    }
    // An event's data may nest to the limit: the body's own object is one level, data another.
    const atLimit = await service.request('POST', '/core/v1/events', {
      key: tenant.key,
      rawBody: `{"type":"pay.deep.thing","data":${nested(MAX_BODY_DEPTH - 1)}}`,
      headers: { 'content-type': 'application/json', ...idem() },
    });
    assert.equal(atLimit.status, 202, atLimit.text);
    // Brackets inside strings do not count.
    const brackets = await service.request('POST', '/core/v1/events', {
      key: tenant.key,
      body: { type: 'pay.deep.thing', data: { text: '[{'.repeat(5000) } },
      headers: idem(),
    });
    assert.equal(brackets.status, 202, brackets.text);
  });

  test('long and odd path segments → 404 NOT_FOUND on every route with an id', async () => {
    const odd = [
      'x'.repeat(101),
      'x'.repeat(3000),
      '%00',
      '..%2F..',
      '%C3%A9',
      '%F0%9F%A6%84',
      '%E2%80%AE',
      "'%20or%201=1",
      '1',
    ];
    for (const route of WITH_ID) {
      for (const id of odd) {
        const path = pathOf(route, everyId(id));
        const response = await service.request(route.method, path, { key: keyFor(route), headers: idem() });
        expectProblem(response, 404, 'NOT_FOUND');
      }
    }
  });

  test('content types other than JSON on a route with a body → 415', async () => {
    for (const route of WITH_BODY) {
      const path = pathOf(route, ids);
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
        'application/jsonx',
      ]) {
        const response = await service.request(route.method, path, {
          key: keyFor(route),
          rawBody: JSON.stringify(bodyOf(route, ids)),
          headers: { 'content-type': type, ...idem() },
        });
        expectProblem(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
      }
      const json = await service.request(route.method, path, {
        key: keyFor(route),
        rawBody: JSON.stringify(bodyOf(route, ids)),
        headers: { 'content-type': 'application/json; charset=utf-8', ...idem() },
      });
      assert.ok(json.status < 300, `${route.method} ${route.path}: ${json.status} ${json.text}`);
    }
  });

  test('each route’s 413 names its own limit', async () => {
    const publish = await service.request('POST', '/core/v1/events', {
      key: tenant.key,
      rawBody: JSON.stringify({ type: 'pay.big.thing', data: { blob: 'x'.repeat(400 * 1024) } }),
      headers: { 'content-type': 'application/json', ...idem() },
    });
    expectProblem(publish, 413, 'PAYLOAD_TOO_LARGE');
    assert.match(publish.body.detail, /320 KiB/);
    const create = await service.request('POST', '/core/v1/webhook-endpoints', {
      key: tenant.key,
      rawBody: JSON.stringify({
        url: 'https://hooks.example.com/',
        eventTypes: ['*'],
        pad: 'x'.repeat(2 * 1024 * 1024),
      }),
      headers: { 'content-type': 'application/json', ...idem() },
    });
    expectProblem(create, 413, 'PAYLOAD_TOO_LARGE');
    assert.match(create.body.detail, /1 MiB/);
  });

  test('a 10 MiB body gets its 413 while the client is still writing: no EPIPE, and the connection serves again', async () => {
    const url = new URL(service.baseUrl);
    const body = Buffer.alloc(10 * 1024 * 1024, 'a');
    for (let round = 0; round < 5; round++) {
      const head = [
        'POST /core/v1/events HTTP/1.1',
        `host: ${url.host}`,
        `x-api-key: ${tenant.key}`,
        `idempotency-key: big-${round}`,
        'content-type: application/json',
        `content-length: ${body.length}`,
      ];
      const next = `GET /core/v1/projects/me HTTP/1.1\r\nhost: ${url.host}\r\nx-api-key: ${tenant.key}\r\nconnection: close\r\n\r\n`;
      const answer = await new Promise<string>((resolve, reject) => {
        let text = '';
        const socket = net.connect(Number(url.port), url.hostname, () => {
          socket.write(`${head.join('\r\n')}\r\n\r\n`);
          socket.write(body, (error) => (error ? reject(error) : socket.write(next)));
        });
        socket.on('data', (data) => {
          text += data;
        });
        socket.on('error', (error) =>
          reject(new Error(`${error.message} after ${JSON.stringify(text.slice(0, 40))}`)),
        );
        socket.on('end', () => resolve(text));
      });
      assert.match(answer, /^HTTP\/1\.1 413 /, `round ${round}`);
      assert.match(answer, /"code":"PAYLOAD_TOO_LARGE"/);
      assert.match(answer, /HTTP\/1\.1 200 OK[\s\S]*"slug"/, 'the next request on the same connection');
    }
  });

  test('errors of the HTTP parser are problems too, with a code and an x-request-id', async () => {
    const host = 'Host: 127.0.0.1\r\n';
    const cases: [string, string | Buffer, number, string][] = [
      ['a garbage request line', 'HELLO THERE\r\n\r\n', 400, 'MALFORMED_REQUEST'],
      [
        'a control byte in a header',
        `GET /livez HTTP/1.1\r\n${host}X-Bad: a\u0001b\r\n\r\n`,
        400,
        'MALFORMED_REQUEST',
      ],
      [
        'a smuggling attempt (content-length and chunked)',
        `POST /core/v1/events HTTP/1.1\r\n${host}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
        400,
        'MALFORMED_REQUEST',
      ],
      [
        'two content-lengths',
        `POST /core/v1/events HTTP/1.1\r\n${host}Content-Length: 1\r\nContent-Length: 2\r\n\r\nab`,
        400,
        'MALFORMED_REQUEST',
      ],
      [
        'a 100 KB header',
        `GET /livez HTTP/1.1\r\n${host}X-Big: ${'a'.repeat(100_000)}\r\n\r\n`,
        431,
        'HEADERS_TOO_LARGE',
      ],
      [
        'thousands of headers',
        `GET /livez HTTP/1.1\r\n${host}${Array.from({ length: 5000 }, (_, i) => `X-H${i}: v\r\n`).join('')}\r\n`,
        431,
        'HEADERS_TOO_LARGE',
      ],
      [
        'an 80 KB query string',
        `GET /livez?q=${'a'.repeat(80_000)} HTTP/1.1\r\n${host}\r\n`,
        431,
        'HEADERS_TOO_LARGE',
      ],
    ];
    for (const [what, bytes, status, code] of cases) {
      const answer = await raw(bytes);
      assert.doesNotThrow(() => expectRawProblem(answer, status, code), what);
    }
  });

  test('a NUL character in a text field → 400 VALIDATION_FAILED, whichever statement would carry it', async () => {
    const nul = 'a\u0000b';
    const writes: [string, string, unknown][] = [
      ['PUT', '/core/v1/event-types/pay.nul.thing', { description: nul }],
      ['POST', '/core/v1/events', { type: 'pay.nul.thing', data: {}, orderingKey: nul }],
    ];
    for (const [method, path, body] of writes) {
      const response = await service.request(method, path, { key: tenant.key, body, headers: idem() });
      expectProblem(response, 400, 'VALIDATION_FAILED');
    }
    // Data is kept as its JSON text, where a NUL is the escape \u0000: stored and delivered as written.
    const data = await service.request('POST', '/core/v1/events', {
      key: tenant.key,
      body: { type: 'pay.nul.thing', data: { text: nul } },
      headers: idem(),
    });
    assert.equal(data.status, 202, data.text);
    const list = await service.request('GET', '/core/v1/event-types', { key: tenant.key });
    assert.equal(list.status, 200, 'the connections still work');
  });

  test('no answer above carried a stack trace, and the service still answers', async () => {
    assert.equal((await service.request('GET', '/livez')).status, 200);
  });
});
