import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { manualClock } from '../src/lib/clock.ts';
import { runMaintenance } from '../src/process/maintenance.ts';
import { usageStore } from '../src/usage/store.ts';
import { expectProblem, startService } from './helpers/app.ts';

// 23:00 UTC: an hour before the day changes.
const clock = manualClock(new Date('2026-03-10T23:00:00Z'));
const service = await startService({ clock, env: { PLATFORM_RATE_LIMIT_PER_SECOND: '0' } });
let n = 0;
const idem = () => ({ 'idempotency-key': `u-${++n}` });

describe('GET /core/v1/usage: the date range', () => {
  const tenant = service.tenant(['usage:read']);
  const usage = async (query: string) =>
    service.request('GET', `/core/v1/usage${query}`, { key: (await tenant).key });

  test('400 USAGE_RANGE_INVALID naming what is wrong', async () => {
    const cases: [string, string, RegExp][] = [
      ['?from=2026-02-30', 'from', /not a calendar date/],
      ['?to=2026-1-01', 'to', /YYYY-MM-DD/],
      ['?from=20260101', 'from', /YYYY-MM-DD/],
      ['?from=2026-13-01', 'from', /not a calendar date/],
      ['?from=2026-03-05&to=2026-03-04', 'from', /after to/],
      ['?from=2026-01-01&to=2026-04-03', 'to', /93 days/],
      ['?from=2025-01-01', 'to', /days; at most 92/],
    ];
    for (const [query, parameter, detail] of cases) {
      const response = await usage(query);
      expectProblem(response, 400, 'USAGE_RANGE_INVALID');
      assert.equal(response.body.errors[0].parameter, parameter, query);
      assert.match(response.body.detail, detail, query);
    }
    expectProblem(await usage('?since=2026-01-01'), 400, 'VALIDATION_FAILED');
  });

  test('92 days inclusive is allowed; the defaults', async () => {
    assert.deepEqual(
      [
        (await usage('?from=2026-01-01&to=2026-04-02')).body.from,
        (await usage('?from=2026-01-01&to=2026-04-02')).body.to,
      ],
      ['2026-01-01', '2026-04-02'],
    );
    const none = (await usage('')).body;
    assert.deepEqual([none.from, none.to], ['2026-02-09', '2026-03-10']); // 30 days, today included
    const toOnly = (await usage('?to=2026-01-31')).body;
    assert.deepEqual([toOnly.from, toOnly.to], ['2026-01-02', '2026-01-31']);
    const fromOnly = (await usage('?from=2026-03-01')).body;
    assert.deepEqual([fromOnly.from, fromOnly.to], ['2026-03-01', '2026-03-10']);
    const leap = (await usage('?from=2024-02-29&to=2024-02-29')).body;
    assert.deepEqual([leap.from, leap.to], ['2024-02-29', '2024-02-29']);
  });
});

describe('metering and daily limits', () => {
  test('counts after real operations, sorted by day, capability and metric; today’s partial counts included', async () => {
    const tenant = await service.tenant();
    for (let i = 0; i < 4; i++) await service.request('GET', '/core/v1/projects/me', { key: tenant.key });
    await service.request('POST', '/core/v1/events', {
      key: tenant.key,
      body: { type: 'pay.payment.succeeded', data: {} },
      headers: idem(),
    });
    await service.request('POST', '/core/v1/subjects/erase', {
      key: tenant.key,
      body: { subject: { type: 'external_id', value: 'u-1' } },
      headers: idem(),
    });
    // No flush yet: the report adds this process's pending counts.
    const report = (await service.request('GET', '/core/v1/usage', { key: tenant.key })).body;
    assert.deepEqual(report.data, [
      { day: '2026-03-10', capability: 'core', metric: 'api_requests', count: 7 },
      { day: '2026-03-10', capability: 'core', metric: 'events_published', count: 1 },
      { day: '2026-03-10', capability: 'core', metric: 'subjects_erased', count: 1 },
    ]);
    await service.context.meter.flush();
    const flushed = (await service.request('GET', '/core/v1/usage', { key: tenant.key })).body;
    assert.equal(flushed.data[0].count, 8);
    assert.deepEqual(flushed.limits, [
      { capability: 'core', metric: 'api_requests', dailyLimit: 1_000_000 },
      { capability: 'core', metric: 'events_published', dailyLimit: 100_000 },
    ]);
  });

  test('a limit reached: 429 with retry-after and RateLimit headers, not counted, no effect; a new UTC day resets it', async () => {
    const tenant = await service.tenant();
    await usageStore(service.db).setLimit(tenant.projectId, 'core', 'events_published', 2);
    const publish = (headers = idem()) =>
      service.request('POST', '/core/v1/events', {
        key: tenant.key,
        body: { type: 'pay.payment.succeeded', data: {} },
        headers,
      });
    const first = idem();
    const published = await publish(first);
    assert.equal(published.status, 202);
    assert.equal((await publish()).status, 202);
    const headers = idem();
    const refused = await publish(headers);
    expectProblem(refused, 429, 'USAGE_LIMIT_EXCEEDED');
    assert.equal(refused.headers.get('retry-after'), '3600');
    assert.equal(refused.headers.get('ratelimit-policy'), '"core.events_published";q=2;w=86400');
    assert.equal(refused.headers.get('ratelimit'), '"core.events_published";r=0;t=3600');
    const events = await service.db.query('select count(*)::int as n from events where project_id = $1', [
      tenant.projectId,
    ]);
    assert.equal(events.rows[0]?.n, 2, 'the refused publish had no effect');
    // The claim comes before the operation's checks: a recorded key replays even when the limit is reached.
    const replayed = await publish(first);
    assert.equal(replayed.status, 202, replayed.text);
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replayed.body, published.body);
    const report = (await service.request('GET', '/core/v1/usage', { key: tenant.key })).body;
    assert.equal(
      report.data.find((d: { metric: string }) => d.metric === 'events_published').count,
      2,
      'not counted',
    );
    assert.deepEqual(
      report.limits.find((l: { metric: string }) => l.metric === 'events_published'),
      { capability: 'core', metric: 'events_published', dailyLimit: 2 },
    );

    clock.advance(3600_000); // 00:00 UTC, the next day
    const retried = await publish(headers); // the same idempotency key: a 429 was not recorded
    assert.equal(retried.status, 202, retried.text);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
    clock.set(new Date('2026-03-10T23:00:00Z'));
  });

  test('the daily request allowance: core/api_requests; reads that explain or recover from it are never refused', async () => {
    const tenant = await service.tenant();
    await usageStore(service.db).setLimit(tenant.projectId, 'core', 'api_requests', 3);
    const list = () => service.request('GET', '/core/v1/webhook-endpoints', { key: tenant.key });
    for (let i = 0; i < 3; i++) assert.equal((await list()).status, 200);
    expectProblem(await list(), 429, 'USAGE_LIMIT_EXCEEDED');
    // A flush landing changes nothing: the allowance is reserved, not read from the counts.
    await service.context.meter.flush();
    expectProblem(await list(), 429, 'USAGE_LIMIT_EXCEEDED');
    for (const path of ['/core/v1/usage', '/core/v1/projects/me', '/api/health']) {
      const response = await service.request('GET', path, { key: tenant.key });
      assert.equal(response.status, 200, `${path}: ${response.text}`);
    }
    const report = (await service.request('GET', '/core/v1/usage', { key: tenant.key })).body;
    const requests = report.data.find((d: { metric: string }) => d.metric === 'api_requests').count;
    assert.ok(requests >= 7, `the reads were counted all the same (${requests})`);
  });

  test('a flush is counted once, even when retried after an unknown outcome', async () => {
    const tenant = await service.tenant();
    const store = usageStore(service.db);
    const increment = {
      projectId: tenant.projectId,
      day: '2026-03-01',
      capability: 'core',
      metric: 'api_requests',
      count: 5,
    };
    const meter = '00000000-0000-4000-8000-00000000f105';
    await store.add(meter, 1, [increment]);
    await store.add(meter, 1, [increment]); // the retry of a flush that had landed
    assert.equal(await store.countOn(tenant.projectId, '2026-03-01', 'core', 'api_requests'), 5);
    await store.add(meter, 2, [increment]);
    await store.add(meter, 1, [increment]); // a stray retry of an older flush
    assert.equal(await store.countOn(tenant.projectId, '2026-03-01', 'core', 'api_requests'), 10);
  });

  test('flush bookkeeping does not grow: one row per process, forgotten by maintenance after 7 silent days', async () => {
    const tenant = await service.tenant();
    const { meter } = service.context;
    for (let i = 0; i < 30; i++) {
      meter.count(tenant.projectId, 'core', 'api_requests');
      await meter.flush();
    }
    const rows = async () =>
      (await service.db.query('select meter_id, last_flush from usage_meters order by flushed_at')).rows;
    const mine = (await rows()).filter((row) => row.meter_id === meter.id);
    assert.equal(mine.length, 1, 'one row for this process after 30 flushes');
    assert.ok(Number(mine[0]?.last_flush) >= 30);

    // A process gone for a week, and one that flushed a day ago: maintenance forgets the first only.
    await service.db.query(
      `insert into usage_meters (meter_id, last_flush, flushed_at) values
         ('00000000-0000-4000-8000-0000000000a1', 7, $1), ('00000000-0000-4000-8000-0000000000a2', 7, $2)`,
      [new Date(clock.now().getTime() - 8 * 86_400_000), new Date(clock.now().getTime() - 86_400_000)],
    );
    await runMaintenance({ ...service.context, clock });
    const left = (await rows()).map((row) => row.meter_id);
    assert.ok(!left.includes('00000000-0000-4000-8000-0000000000a1'));
    assert.ok(left.includes('00000000-0000-4000-8000-0000000000a2'));
    assert.ok(left.includes(meter.id));
  });
});

describe('request rate limits', async () => {
  const limited = await startService({
    env: { PLATFORM_RATE_LIMIT_PER_SECOND: '1', PLATFORM_RATE_LIMIT_BURST: '3' },
  });
  test('per key: a burst, then 429 RATE_LIMITED with retry-after and RateLimit headers', async () => {
    const a = await limited.tenant();
    const b = await limited.tenant();
    const statuses: number[] = [];
    let refused: Awaited<ReturnType<typeof limited.request>> | undefined;
    for (let i = 0; i < 5; i++) {
      const response = await limited.request('GET', '/core/v1/projects/me', { key: a.key });
      statuses.push(response.status);
      if (response.status === 429) refused = response;
    }
    assert.deepEqual(statuses.slice(0, 3), [200, 200, 200]);
    assert.ok(refused, `no 429 in ${statuses}`);
    expectProblem(refused, 429, 'RATE_LIMITED');
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.equal(refused.headers.get('ratelimit-policy'), '"requests";q=3;w=3');
    assert.equal(
      (await limited.request('GET', '/core/v1/projects/me', { key: b.key })).status,
      200,
      'another key is unaffected',
    );
  });
});
