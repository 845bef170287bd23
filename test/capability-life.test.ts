// A capability's life (contract 0.4): an operator removes it over HTTP in one process, and from the 204 on
// every other process (here, this file's own service) has let it go: its keys refused, its gateway
// routes 404, its providers out of health, its pending erasure tasks skipped; its usage history kept; its
// name free again; audited. The CLI shows, points and removes one the same way. The security set of the
// new route.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, describe, test } from 'node:test';
import { expectProblem, startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { freshDatabase } from './helpers/database.ts';
import { runCli, startProcess } from './helpers/process.ts';
import { countOf } from './helpers/usage.ts';

const upstream = createServer((request, response) => {
  request.resume();
  request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
after(() => upstream.close());
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;

const databaseUrl = await freshDatabase();
const setup = await startService({ databaseUrl, env: { PLATFORM_RATE_LIMIT_PER_SECOND: '0' } });
const env = {
  DATABASE_URL: databaseUrl,
  PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
  PLATFORM_RATE_LIMIT_PER_SECOND: '0',
  PLATFORM_LOG_LEVEL: 'warn',
};
const other = await startProcess('serve', env);
const operator = await setup.operator();
const MANIFEST = {
  description: 'Here for a while',
  scopes: [{ name: 'brief:use', description: 'Use' }],
  metrics: [{ name: 'units', description: 'Units' }],
  eventTypes: [],
  providers: [{ name: 'mailer' }],
  erasure: null,
  gateway: { routes: [{ method: 'GET', path: '/v1/things/{id}', scope: 'brief:use', idempotent: false }] },
};
let n = 0;
const remove = (name: string, key = operator.key, base = other.baseUrl) =>
  fetch(`${base}/admin/v1/capabilities/${name}`, {
    method: 'DELETE',
    headers: { 'x-api-key': key, 'idempotency-key': `remove-${++n}` },
  });

describe("a capability's life", () => {
  test('removed in one process: gone from every other one at its 204, its history kept, its name free', async () => {
    const cap = await setup.capability('brief', { upstream: upstreamUrl, manifest: MANIFEST });
    const tenant = await setup.tenant(['brief:use', 'usage:read', 'subjects:erase']);
    assert.equal((await setup.request('GET', '/brief/v1/things/1', { key: tenant.key })).status, 200);
    const usage = await setup.request('POST', '/capability/v1/usage', {
      key: cap.key,
      body: { records: [{ id: 'u-1', projectId: tenant.projectId, metric: 'units', value: 7 }] },
    });
    assert.equal(usage.status, 200);
    const reported = await setup.request('PUT', '/capability/v1/breakers', {
      key: cap.key,
      body: { instance: 'i-1', providers: [{ provider: 'mailer', state: 'closed' }] },
      headers: { 'idempotency-key': 'report-1' },
    });
    assert.equal(reported.status, 204, reported.text);
    const erasureId = await setup.erasureWithTask(tenant, 'brief');
    await setup.context.meter.flush();

    const removed = await remove('brief');
    assert.equal(removed.status, 204);

    // This file's service is another process on the same database: it has let go already.
    expectProblem(await setup.request('GET', '/brief/v1/things/2', { key: tenant.key }), 404, 'NOT_FOUND');
    expectProblem(
      await setup.request('GET', '/capability/v1/erasure-tasks', { key: cap.key }),
      401,
      'API_KEY_INVALID',
    );
    const health = await setup.request('GET', '/api/health', { key: tenant.key });
    assert.ok(
      !health.body.breakers.some((b: { provider: string }) => b.provider.startsWith('brief/')),
      JSON.stringify(health.body.breakers),
    );
    const erasure = await setup.request('GET', `/core/v1/erasures/${erasureId}`, { key: tenant.key });
    const task = erasure.body.capabilities.find((c: { capability: string }) => c.capability === 'brief');
    assert.equal(task?.state, 'skipped', JSON.stringify(erasure.body));
    assert.equal(erasure.body.state, 'complete');
    const history = await setup.request('GET', '/core/v1/usage', { key: tenant.key });
    assert.equal(countOf(history.body.data, 'brief', 'units'), 7, 'its usage history is kept and listed');
    const audit = await setup.request('GET', '/admin/v1/audit?action=capability.removed', {
      key: operator.key,
    });
    assert.ok(JSON.stringify(audit.body).includes('"brief"'), audit.text);

    expectProblem(
      await setup.request('GET', '/admin/v1/capabilities/brief', { key: operator.key }),
      404,
      'NOT_FOUND',
    );
    const again = await setup.capability('brief', { upstream: upstreamUrl, manifest: MANIFEST });
    assert.notEqual(again.key, cap.key, 'registered again, as a new capability');
    expectProblem(
      await setup.request('GET', '/capability/v1/erasure-tasks', { key: cap.key }),
      401,
      'API_KEY_INVALID',
    );
  });

  test('the security set: no key, the wrong kinds of key, a missing scope, an unknown name, no idempotency key', async () => {
    await setup.capability('guarded', { manifest: { ...MANIFEST, gateway: null, scopes: [] } });
    const guarded = await setup.capability('guarded2');
    const tenant = await setup.tenant();
    const readOnly = await setup.operator(['projects:manage']);
    const noKey = await fetch(`${other.baseUrl}/admin/v1/capabilities/guarded`, {
      method: 'DELETE',
      headers: { 'idempotency-key': 'k' },
    });
    assert.equal(noKey.status, 401);
    assert.equal((await remove('guarded', 'pk_op_wrongwrongwrongwrongwrongwrong')).status, 401);
    for (const key of [tenant.key, guarded.key, readOnly.key])
      assert.equal((await remove('guarded', key)).status, 403, key.slice(0, 7));
    assert.equal((await remove('nothing_here')).status, 404);
    const noIdempotency = await fetch(`${other.baseUrl}/admin/v1/capabilities/guarded`, {
      method: 'DELETE',
      headers: { 'x-api-key': operator.key },
    });
    assert.equal(noIdempotency.status, 400);
    assert.equal((await remove('guarded')).status, 204);
  });

  test('the CLI shows a capability, points it somewhere else and removes it; each bound before it prints', async () => {
    await setup.capability('viacli', { manifest: { ...MANIFEST, gateway: null, scopes: [] } });
    const updated = await runCli(
      ['capabilities', 'update', 'viacli', '--upstream', upstreamUrl, '--json'],
      env,
    );
    assert.equal(updated.code, 0, updated.stderr);
    assert.equal(JSON.parse(updated.stdout).upstream, upstreamUrl);
    assert.equal(setup.context.registry.get('viacli')?.gateway, undefined, 'no gateway declared');
    const shown = await runCli(['capabilities', 'show', 'viacli'], env);
    assert.match(shown.stdout, new RegExp(`upstream\\s+${upstreamUrl}`));
    assert.match(shown.stdout, /breakers\s+no live reports/);
    const removed = await runCli(['capabilities', 'remove', 'viacli'], env);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(setup.context.registry.get('viacli'), undefined, 'gone from this process at once');
    const missing = await runCli(['capabilities', 'show', 'viacli'], env);
    assert.notEqual(missing.code, 0);
  });
});

describe('grants', () => {
  test('GET /capability/v1/projects needs projects:read, given by an operator alone and bound at its 200', async () => {
    const billing = await setup.capability('billing_grants', {
      manifest: { ...MANIFEST, gateway: null, scopes: [] },
    });
    const tenant = await setup.tenant();
    const list = () => setup.request('GET', '/capability/v1/projects?limit=100', { key: billing.key });
    const refused = await list();
    expectProblem(refused, 403, 'INSUFFICIENT_SCOPE');
    assert.match(refused.body.detail, /projects:read/);
    const patch = (grants: string[], key = operator.key) =>
      fetch(`${other.baseUrl}/admin/v1/capabilities/billing_grants`, {
        method: 'PATCH',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': `g-${++n}` },
        body: JSON.stringify({ grants }),
      });
    assert.equal(
      (await patch(['projects:read'], billing.key)).status,
      403,
      'a capability never grants itself',
    );
    const granted = await patch(['projects:read']);
    assert.equal(granted.status, 200);
    assert.deepEqual(((await granted.json()) as { grants: string[] }).grants, ['projects:read']);
    const page = await list();
    assert.equal(page.status, 200, page.text);
    const row = page.body.data.find((p: { id: string }) => p.id === tenant.projectId);
    assert.deepEqual(Object.keys(row).sort(), ['createdAt', 'id', 'mode', 'name', 'slug']);
    assert.equal(row.slug, tenant.slug);
    // One grant opens its own routes only: the usage feed needs usage:read.
    const feed = await setup.request('GET', '/capability/v1/usage/changes', { key: billing.key });
    expectProblem(feed, 403, 'INSUFFICIENT_SCOPE');
    assert.match(feed.body.detail, /usage:read/);
    assert.equal((await patch([])).status, 200);
    expectProblem(await list(), 403, 'INSUFFICIENT_SCOPE');
    assert.equal((await patch(['everything'])).status, 400);
  });

  test('the security set of GET /capability/v1/projects', async () => {
    const tenant = await setup.tenant();
    expectProblem(await setup.request('GET', '/capability/v1/projects'), 401, 'API_KEY_MISSING');
    expectProblem(
      await setup.request('GET', '/capability/v1/projects', { key: 'pk_cap_nope' }),
      401,
      'API_KEY_INVALID',
    );
    for (const key of [tenant.key, operator.key])
      expectProblem(
        await setup.request('GET', '/capability/v1/projects', { key }),
        403,
        'INSUFFICIENT_SCOPE',
      );
  });

  test('the CLI grants and shows them; an unknown grant is refused', async () => {
    await setup.capability('cli_grants', { manifest: { ...MANIFEST, gateway: null, scopes: [] } });
    const granted = await runCli(
      ['capabilities', 'update', 'cli_grants', '--grants', 'usage:read,projects:read', '--json'],
      env,
    );
    assert.equal(granted.code, 0, granted.stderr);
    assert.deepEqual(JSON.parse(granted.stdout).grants, ['projects:read', 'usage:read']);
    assert.deepEqual(setup.context.registry.get('cli_grants')?.grants, ['projects:read', 'usage:read']);
    assert.match(
      (await runCli(['capabilities', 'show', 'cli_grants'], env)).stdout,
      /grants\s+projects:read, usage:read/,
    );
    const wrong = await runCli(['capabilities', 'update', 'cli_grants', '--grants', 'admin'], env);
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /--grants takes projects:read, usage:read/);
  });
});
