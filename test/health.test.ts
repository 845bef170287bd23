import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { MIGRATIONS } from '../src/db/migrate.ts';
import { type BreakerState, CapabilityRegistry } from '../src/registry.ts';
import { expectProblem, startService } from './helpers/app.ts';
import { databaseAddress, freshDatabase } from './helpers/database.ts';
import { startProxy } from './helpers/proxy.ts';

const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

// The service reaches its database through a proxy the test can cut.
const database = new URL(await freshDatabase());
const proxy = await startProxy(databaseAddress(database.toString()));
after(() => proxy.close());
const proxiedUrl = `postgresql://postgres@127.0.0.1:${proxy.port}${database.pathname}`;
// A capability's breaker, as the registry sees it: a provider and a state the capability keeps.
const breaker: { provider: string; state: BreakerState } = { provider: 'sms-gateway', state: 'closed' };
const registry = new CapabilityRegistry();
registry.register({ name: 'notify', breakers: [breaker] });
const service = await startService({
  databaseUrl: proxiedUrl,
  registry,
  env: { PLATFORM_COMMIT: 'c0ffee1', PLATFORM_ENV: 'dev' },
});
const tenant = await service.tenant();

describe('GET /api/health', () => {
  test('200 with every field from real sources', async () => {
    const response = await service.request('GET', '/api/health', { key: tenant.key });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, {
      status: 'ok',
      env: 'dev',
      version,
      commit: 'c0ffee1',
      db: 'up',
      queue: 'idle',
      queueDead: 0,
      queueFailed24h: 0,
      webhooksDead24h: 0,
      breakers: [{ provider: 'sms-gateway', state: 'closed' }],
      reasons: [],
      lastMigration: MIGRATIONS.at(-1)?.name,
      history: {
        retentionDays: 30,
        horizon: new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10),
        oldestPartition: new Date().toISOString().slice(0, 10), // a new database: today is its first day
      },
      endpoints: [], // the key's project has none (delivery-control.test.ts shows them)
    });
    const operator = await service.operator();
    const asOperator = await service.request('GET', '/api/health', { key: operator.key });
    assert.equal(asOperator.body.endpoints, undefined, 'an operator’s key has no project');
  });

  test('an open breaker makes it degraded (still 200)', async () => {
    breaker.state = 'open';
    const response = await service.request('GET', '/api/health', { key: tenant.key });
    assert.equal(response.status, 200);
    assert.equal(response.body.status, 'degraded');
    assert.deepEqual(response.body.breakers, [{ provider: 'sms-gateway', state: 'open' }]);
    assert.deepEqual(response.body.reasons, [
      { code: 'breaker_open', message: 'the circuit breaker of sms-gateway is open' },
    ]);
    breaker.state = 'closed';
  });

  test('a pending migration makes it degraded', async () => {
    const last = MIGRATIONS.at(-1)?.name;
    await service.db.query('delete from schema_migrations where name = $1', [last]);
    try {
      const response = await service.request('GET', '/api/health', { key: tenant.key });
      assert.equal(response.body.status, 'degraded');
      assert.deepEqual(
        response.body.reasons.map((r: { code: string }) => r.code),
        ['migrations_pending'],
      );
      assert.match(response.body.reasons[0].message, /^1 migrations of this build are not applied/);
      const ready = await service.request('GET', '/readyz');
      assert.equal(ready.status, 503, 'not ready on a database whose migrations are pending');
      assert.deepEqual(ready.body, { status: '1 migrations pending' });
    } finally {
      await service.db.query('insert into schema_migrations (name) values ($1)', [last]);
    }
  });

  test('probes: /livez and /readyz need no key', async () => {
    assert.deepEqual((await service.request('GET', '/livez')).body, { status: 'alive' });
    assert.deepEqual((await service.request('GET', '/readyz')).body, { status: 'ready' });
  });

  test('database unreachable: 503 with a Health body, never a 401; back to 200 when it returns', async () => {
    const unseen = await service.tenant(); // created while up, never used before the outage
    assert.equal((await service.request('GET', '/core/v1/projects/me', { key: tenant.key })).status, 200);
    assert.equal((await service.request('GET', '/api/health', { key: tenant.key })).status, 200);
    await proxy.cut();
    try {
      const health = await service.request('GET', '/api/health', { key: tenant.key });
      assert.equal(health.status, 503);
      assert.equal(health.body.db, 'down');
      assert.equal(health.body.status, 'degraded');
      assert.deepEqual(health.body.reasons, [
        { code: 'database_down', message: 'the database did not answer within a second' },
      ]);
      assert.equal(health.body.lastMigration, MIGRATIONS.at(-1)?.name, 'the last known migration is kept');

      const healthUnseenKey = await service.request('GET', '/api/health', { key: unseen.key });
      assert.equal(healthUnseenKey.status, 503);
      assert.equal(healthUnseenKey.body.db, 'down');

      // a recently verified key still passes from the cache; a key that cannot be checked gets 503
      assert.equal((await service.request('GET', '/core/v1/projects/me', { key: tenant.key })).status, 200);
      const unchecked = await service.request('GET', '/core/v1/projects/me', { key: unseen.key });
      expectProblem(unchecked, 503, 'SERVICE_UNAVAILABLE');

      assert.equal((await service.request('GET', '/readyz')).status, 503);
      assert.equal((await service.request('GET', '/livez')).status, 200);
    } finally {
      await proxy.restore();
    }
    const healthy = await service.request('GET', '/api/health', { key: tenant.key });
    assert.equal(healthy.status, 200, healthy.text);
    assert.equal(healthy.body.db, 'up');
    assert.equal((await service.request('GET', '/core/v1/projects/me', { key: unseen.key })).status, 200);
  });

  test('an outage of several seconds: health is 503 with a Health body throughout, a cached key is served', {
    timeout: 60_000,
  }, async () => {
    const me = () => service.request('GET', '/core/v1/projects/me', { key: tenant.key });
    assert.equal((await me()).status, 200);
    assert.equal(
      (await service.request('GET', '/core/v1/webhook-endpoints', { key: tenant.key })).status,
      200,
    );
    await proxy.cut();
    const seen: string[] = [];
    try {
      // Past the key cache (5 s), the limits cache (5 s) and the allowance's idle time (2 s).
      const until = Date.now() + 8000;
      while (Date.now() < until) {
        const health = await service.request('GET', '/api/health', { key: tenant.key });
        assert.equal(health.status, 503, health.text);
        assert.equal(health.headers.get('content-type'), 'application/json; charset=utf-8');
        assert.equal(health.body.db, 'down');
        assert.equal(health.body.status, 'degraded');
        assert.equal(typeof health.body.queueDead, 'number');
        const served = await me();
        assert.equal(served.status, 200, `a request that needs no database is answered: ${served.text}`);
        const needsDatabase = await service.request('GET', '/core/v1/webhook-endpoints', { key: tenant.key });
        expectProblem(needsDatabase, 503, 'SERVICE_UNAVAILABLE');
        seen.push(`${health.status}/${served.status}/${needsDatabase.status}`);
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
    } finally {
      await proxy.restore();
    }
    assert.ok(seen.length >= 10, `checked throughout the outage: ${seen.length} times`);
    const healthy = await service.request('GET', '/api/health', { key: tenant.key });
    assert.equal(healthy.status, 200, healthy.text);
  });
});

describe('idempotent writes across a lost database connection', () => {
  test('the connections that replace the lost ones prepare their statements again', async () => {
    // Idempotent writes run statements prepared on each connection (src/db/inline.ts): the pool's new
    // connections after an outage must prepare their own, not assume the old ones' statements.
    const create = (key: string) =>
      service.request('POST', '/core/v1/webhook-endpoints', {
        key: tenant.key,
        headers: { 'idempotency-key': key },
        body: { url: 'https://93.184.216.34/hook', eventTypes: ['pay.payment.succeeded'] },
      });
    const before = await create('before-the-cut');
    assert.equal(before.status, 201, before.text);
    await proxy.cut();
    await proxy.restore();
    // A request may still meet a connection the pool has not yet seen die (503, as in an outage).
    for (let i = 0; i < 50 && (await service.request('GET', '/readyz')).status !== 200; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const after = await create('after-the-cut');
    assert.equal(after.status, 201, after.text);
    const replay = await create('before-the-cut');
    assert.equal(replay.status, 201, replay.text);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.body.id, before.body.id);
  });
});
