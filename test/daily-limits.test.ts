// Daily limits are a promise to the paying customer of a product: never admitted past, with concurrent
// requests in one process or across several (allowance reserved in blocks, usage/limits.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { usageStore } from '../src/usage/store.ts';
import { startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { startProcess } from './helpers/process.ts';

const service = await startService({ env: { PLATFORM_RATE_LIMIT_PER_SECOND: '0' } });
let n = 0;

async function publishAll(baseUrls: string[], key: string, count: number) {
  const statuses = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      fetch(`${baseUrls[i % baseUrls.length]}/core/v1/events`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': `dl-${++n}` },
        body: JSON.stringify({ type: 'pay.payment.succeeded', data: { i } }),
      }).then((response) => response.status),
    ),
  );
  return {
    admitted: statuses.filter((s) => s === 202).length,
    refused: statuses.filter((s) => s === 429).length,
  };
}

const eventsOf = async (projectId: string) =>
  Number(
    (await service.db.query('select count(*)::int as n from events where project_id = $1', [projectId]))
      .rows[0]?.n,
  );

describe('daily limits are never passed', () => {
  test('one process, concurrent publishes: exactly the limit is admitted, whatever the concurrency', async () => {
    for (const [limit, concurrency, total] of [
      [50, 20, 80],
      [50, 150, 150],
      [1, 40, 40],
    ] as const) {
      const tenant = await service.tenant();
      await usageStore(service.db).setLimit(tenant.projectId, 'core', 'events_published', limit);
      let admitted = 0;
      for (let sent = 0; sent < total; sent += concurrency) {
        const batch = await publishAll([service.baseUrl], tenant.key, Math.min(concurrency, total - sent));
        admitted += batch.admitted;
        assert.equal(
          batch.admitted + batch.refused,
          Math.min(concurrency, total - sent),
          'every answer 202 or 429',
        );
      }
      assert.equal(admitted, limit, `limit ${limit}, ${concurrency} at a time`);
      assert.equal(await eventsOf(tenant.projectId), limit);
    }
  });

  test('one process, concurrent requests against core/api_requests: never one over', async () => {
    const tenant = await service.tenant();
    await usageStore(service.db).setLimit(tenant.projectId, 'core', 'api_requests', 30);
    const statuses = await Promise.all(
      Array.from({ length: 100 }, () =>
        service.request('GET', '/core/v1/webhook-endpoints', { key: tenant.key }).then((r) => r.status),
      ),
    );
    assert.equal(statuses.filter((s) => s === 200).length, 30);
    assert.equal(statuses.filter((s) => s === 429).length, 70);
  });

  test('two API processes: never one over; what a process holds unused goes back to the day', async () => {
    const databaseUrl = service.context.config.databaseUrl as string;
    const env = {
      DATABASE_URL: databaseUrl,
      PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      PLATFORM_RATE_LIMIT_PER_SECOND: '0',
      PLATFORM_LOG_LEVEL: 'warn',
    };
    const [a, b] = await Promise.all([startProcess('serve', env), startProcess('serve', env)]);
    const urls = [a.baseUrl, b.baseUrl];
    for (const [limit, total] of [
      [100, 150],
      [20, 150],
    ] as const) {
      const tenant = await service.tenant();
      await usageStore(service.db).setLimit(tenant.projectId, 'core', 'events_published', limit);
      const first = await publishAll(urls, tenant.key, total);
      assert.ok(first.admitted <= limit, `${first.admitted} admitted over a limit of ${limit}`);
      // What the other process held unused is the most a process can have refused with room left.
      assert.ok(
        first.admitted >= limit - Math.ceil(limit / 16),
        `only ${first.admitted} of ${limit} admitted`,
      );
      await new Promise((resolve) => setTimeout(resolve, 3500)); // unused blocks go back after 2 s idle
      const second = await publishAll(urls, tenant.key, 40);
      assert.equal(first.admitted + second.admitted, limit, 'the whole allowance, and not one more');
      assert.equal(await eventsOf(tenant.projectId), limit);
    }
  });
});
