// Settings bind at their 200 (contract 0.4), proven across processes: two `serve` processes and this
// file's own service share one database, and right after an operator's change is answered by one of
// them, the other applies it: a lowered daily limit caps reservations and gateway calls in both, a
// rotated signing secret signs there at once (both secrets), a retired one no longer does, a changed
// upstream is where the next request goes. Before this, each took up to 5 s (a cache's life).
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { after, describe, test } from 'node:test';
import { startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { freshDatabase } from './helpers/database.ts';
import { signedWith as signedWithMethod } from './helpers/gateway.ts';
import { startProcess } from './helpers/process.ts';
import { countOf } from './helpers/usage.ts';

/** Two upstreams on loopback, each recording what it received. */
function recordingUpstream(name: string) {
  const seen: IncomingMessage['headers'][] = [];
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      seen.push(request.headers);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name }));
    });
  });
  return { seen, server };
}
const first = recordingUpstream('first');
const second = recordingUpstream('second');
for (const { server } of [first, second]) {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => server.close());
}
const urlOf = (upstream: typeof first) =>
  `http://127.0.0.1:${(upstream.server.address() as { port: number }).port}`;

const databaseUrl = await freshDatabase();
const setup = await startService({ databaseUrl, env: { PLATFORM_RATE_LIMIT_PER_SECOND: '0' } });
const operator = await setup.operator();
const cap = await setup.capability('bind', {
  upstream: urlOf(first),
  manifest: {
    description: 'Settings that bind',
    scopes: [{ name: 'bind:use', description: 'Use' }],
    metrics: [
      { name: 'units', description: 'Units', defaultDailyLimit: 1000 },
      { name: 'calls', description: 'Calls', defaultDailyLimit: 1000 },
    ],
    eventTypes: [],
    providers: [],
    erasure: null,
    gateway: {
      routes: [
        { method: 'GET', path: '/v1/things/{id}', scope: 'bind:use', idempotent: false, metric: 'calls' },
      ],
    },
  },
});
const env = {
  DATABASE_URL: databaseUrl,
  PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
  PLATFORM_RATE_LIMIT_PER_SECOND: '0',
  PLATFORM_LOG_LEVEL: 'warn',
};
const [a, b] = [await startProcess('serve', env), await startProcess('serve', env)] as const;
const processes = [a.baseUrl, b.baseUrl];

const call = async (
  base: string,
  method: string,
  path: string,
  key: string,
  body?: unknown,
  idem?: string,
) => {
  const headers: Record<string, string> = { 'x-api-key': key };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (idem) headers['idempotency-key'] = idem;
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed: any = await response.json().catch(() => undefined);
  return { status: response.status, body: parsed };
};
let n = 0;
const admin = (base: string, method: string, path: string, body?: unknown) =>
  call(base, method, `/admin/v1${path}`, operator.key, body, method === 'GET' ? undefined : `bind-${++n}`);

const signedWith = (headers: IncomingMessage['headers'], secret: string, target: string) =>
  signedWithMethod(headers, secret, 'GET', target);
/** A reservation of one unit of the tenant's day, made through `base`. */
const reserveOne = (base: string, projectId: string, idempotencyKey: string) =>
  call(
    base,
    'POST',
    '/capability/v1/reservations',
    cap.key,
    { projectId, metric: 'units', amount: 1 },
    idempotencyKey,
  );

describe('settings bind at their 200, in every process', () => {
  test('a lowered daily limit caps reservations in both processes from its answer on', async () => {
    const tenant = await setup.tenant(['bind:use']);
    // Both processes hold allowances under the default limit (1,000) before the change.
    for (const base of processes) {
      const reserved = await reserveOne(base, tenant.projectId, `warm-${base}`);
      assert.equal(reserved.status, 201, JSON.stringify(reserved.body));
    }
    const set = await admin(a.baseUrl, 'PUT', `/projects/${tenant.projectId}/limits/bind/units`, {
      dailyLimit: 10,
    });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        reserveOne(processes[i % 2] as string, tenant.projectId, `after-${i}`),
      ),
    );
    const granted = answers.filter((r) => r.status === 201).length;
    assert.ok(
      answers.every((r) => r.status === 201 || r.status === 429),
      JSON.stringify(answers.map((r) => r.status)),
    );
    assert.ok(granted <= 8, `2 were reserved before; ${granted} more granted under a limit of 10`);
    assert.ok(granted >= 1, 'the day still had room');
    const limit = await call(b.baseUrl, 'GET', `/capability/v1/limits/${tenant.projectId}/units`, cap.key);
    assert.equal(limit.body.dailyLimit, 10);
    assert.ok(limit.body.used + limit.body.reserved <= 10, JSON.stringify(limit.body));
  });

  test('a gateway route limited to 3 a day lets 3 through across both processes, and counts 3', async () => {
    const tenant = await setup.tenant(['bind:use', 'usage:read']);
    const warm = await call(b.baseUrl, 'GET', '/bind/v1/things/0', tenant.key);
    assert.equal(warm.status, 200);
    const set = await admin(a.baseUrl, 'PUT', `/projects/${tenant.projectId}/limits/bind/calls`, {
      dailyLimit: 3,
    });
    assert.equal(set.status, 200);
    const statuses = [];
    for (let i = 1; i <= 5; i++)
      statuses.push(
        (await call(processes[i % 2] as string, 'GET', `/bind/v1/things/${i}`, tenant.key)).status,
      );
    assert.deepEqual(statuses, [200, 200, 429, 429, 429], 'one before the change, two after');
    let count = 0;
    for (let tries = 0; tries < 40 && count !== 3; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const usage = await call(a.baseUrl, 'GET', '/core/v1/usage', tenant.key);
      count = countOf(usage.body.data, 'bind', 'calls');
    }
    assert.equal(count, 3);
  });

  test('a rotated signing secret signs in the other process from its 200; after retire only the new one', async () => {
    const tenant = await setup.tenant(['bind:use']);
    assert.equal((await call(b.baseUrl, 'GET', '/bind/v1/things/1', tenant.key)).status, 200);
    assert.ok(signedWith(first.seen.at(-1) ?? {}, cap.signingSecret, '/v1/things/1'));
    const rotated = await admin(a.baseUrl, 'POST', '/capabilities/bind/rotate-signing-secret');
    assert.equal(rotated.status, 200);
    const secret = rotated.body.signingSecret as string;
    assert.equal((await call(b.baseUrl, 'GET', '/bind/v1/things/2', tenant.key)).status, 200);
    const during = first.seen.at(-1) ?? {};
    assert.ok(signedWith(during, secret, '/v1/things/2'), 'the new secret signs at once');
    assert.ok(signedWith(during, cap.signingSecret, '/v1/things/2'), 'and the previous one still does');
    const retired = await admin(a.baseUrl, 'POST', '/capabilities/bind/retire-previous-signing-secret');
    assert.equal(retired.status, 200);
    assert.equal((await call(b.baseUrl, 'GET', '/bind/v1/things/3', tenant.key)).status, 200);
    const afterRetire = first.seen.at(-1) ?? {};
    assert.ok(signedWith(afterRetire, secret, '/v1/things/3'));
    assert.ok(
      !signedWith(afterRetire, cap.signingSecret, '/v1/things/3'),
      'the retired secret signs no more',
    );
    assert.equal(String(afterRetire['x-platform-signature']).split(' ').length, 1);
  });

  test('a changed upstream is where the other process sends the next request', async () => {
    const tenant = await setup.tenant(['bind:use']);
    assert.equal((await call(b.baseUrl, 'GET', '/bind/v1/things/1', tenant.key)).body.name, 'first');
    const patched = await admin(a.baseUrl, 'PATCH', '/capabilities/bind', { upstream: urlOf(second) });
    assert.equal(patched.status, 200);
    assert.equal((await call(b.baseUrl, 'GET', '/bind/v1/things/2', tenant.key)).body.name, 'second');
    assert.equal((await call(a.baseUrl, 'GET', '/bind/v1/things/3', tenant.key)).body.name, 'second');
  });
});
