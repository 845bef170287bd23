// Metering for capabilities (docs/capabilities.md), through HTTP: usage records counted exactly once by their
// id (in a batch and across batches, late ones on their own UTC day, visible at once in the project's usage),
// reservations against the daily limit (never past it, however many at once, in one process or two),
// commit, release and expiry, and a metric's figures of the day.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectProblem, startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { startProcess } from './helpers/process.ts';
import { countOf } from './helpers/usage.ts';

const service = await startService({ env: { PLATFORM_RATE_LIMIT_PER_SECOND: '0' } });
const operator = await service.operator();
const MANIFEST = {
  description: 'Tokens for models',
  scopes: [{ name: 'ai:complete', description: 'Completions' }],
  metrics: [
    { name: 'tokens', description: 'Tokens used', defaultDailyLimit: 100 },
    { name: 'calls', description: 'Calls made' },
  ],
  eventTypes: [],
  providers: [],
  erasure: null,
  gateway: null,
};
const cap = await service.capability('ai', { manifest: MANIFEST });
let n = 0;
const idem = () => ({ 'idempotency-key': `meter-${++n}` });
const call = (method: string, path: string, body?: unknown) =>
  service.request(method, path, { key: cap.key, body, headers: method === 'GET' ? {} : idem() });
const record = (records: unknown[]) =>
  service.request('POST', '/capability/v1/usage', { key: cap.key, body: { records } });
const usageOf = async (projectId: string, metric: string, day?: string) => {
  const { rows } = await service.db.query<{ count: number }>(
    `select count from usage_daily where project_id = $1 and capability = 'ai' and metric = $2
        and day = coalesce($3::date, (now() at time zone 'UTC')::date)`,
    [projectId, metric, day ?? null],
  );
  return rows[0]?.count ?? 0;
};

describe('usage records', () => {
  test('a batch counts each id once: repeats in the batch and later ones are duplicates, the first wins', async () => {
    const tenant = await service.tenant();
    const r = (id: string, value: number) => ({ id, projectId: tenant.projectId, metric: 'calls', value });
    const first = await record([r('a', 1), r('b', 2), r('a', 100)]);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body, { accepted: 2, duplicates: 1 });
    const again = await record([r('b', 2), r('c', 4)]);
    assert.deepEqual(again.body, { accepted: 1, duplicates: 1 });
    assert.equal(await usageOf(tenant.projectId, 'calls'), 7, 'a=1, b=2, c=4');
    // Visible at once in the project's usage, and the management API's.
    const usage = await service.request('GET', '/core/v1/usage', { key: tenant.key });
    assert.equal(countOf(usage.body.data, 'ai', 'calls'), 7, JSON.stringify(usage.body));
    assert.ok(
      usage.body.limits.some(
        (l: { capability: string; metric: string; dailyLimit: number }) =>
          l.capability === 'ai' && l.metric === 'tokens' && l.dailyLimit === 100,
      ),
    );
    const managed = await service.request('GET', `/admin/v1/projects/${tenant.projectId}/usage`, {
      key: operator.key,
    });
    assert.deepEqual(managed.body.data, usage.body.data);
  });

  test('a late record counts on its own UTC day; too early or too late is refused', async () => {
    const tenant = await service.tenant();
    const threeDaysAgo = new Date(Date.now() - 3 * 86_400_000);
    const late = await record([
      {
        id: 'late',
        projectId: tenant.projectId,
        metric: 'calls',
        value: 5,
        time: threeDaysAgo.toISOString(),
      },
    ]);
    assert.deepEqual(late.body, { accepted: 1, duplicates: 0 });
    assert.equal(await usageOf(tenant.projectId, 'calls', threeDaysAgo.toISOString().slice(0, 10)), 5);
    assert.equal(await usageOf(tenant.projectId, 'calls'), 0);
    for (const time of [new Date(Date.now() - 36 * 86_400_000), new Date(Date.now() + 10 * 60_000)]) {
      const refused = await record([
        { id: 't', projectId: tenant.projectId, metric: 'calls', value: 1, time },
      ]);
      expectProblem(refused, 400, 'VALIDATION_FAILED');
      assert.equal(refused.body.errors[0].pointer, '/records/0/time');
    }
  });

  test('any invalid record refuses the batch, with a pointer each, and records nothing', async () => {
    const tenant = await service.tenant();
    const good = { id: 'g', projectId: tenant.projectId, metric: 'calls', value: 1 };
    const refused = await record([
      good,
      { ...good, id: 'x', projectId: '00000000-0000-4000-8000-000000000000' },
      { ...good, id: 'y', metric: 'nothing' },
    ]);
    expectProblem(refused, 400, 'VALIDATION_FAILED');
    assert.deepEqual(
      refused.body.errors.map((e: { pointer: string }) => e.pointer),
      ['/records/1/projectId', '/records/2/metric'],
    );
    for (const bad of [
      { ...good, value: 0 },
      { ...good, value: 2 ** 53 },
      { ...good, id: '' },
      { ...good, id: 'a b' },
      { ...good, id: 'x'.repeat(256) },
    ]) {
      expectProblem(await record([bad]), 400, 'VALIDATION_FAILED');
    }
    expectProblem(await record([]), 400, 'VALIDATION_FAILED');
    expectProblem(
      await record(Array.from({ length: 1001 }, (_, i) => ({ ...good, id: `m${i}` }))),
      400,
      'VALIDATION_FAILED',
    );
    assert.equal(await usageOf(tenant.projectId, 'calls'), 0);
    const thousand = await record(Array.from({ length: 1000 }, (_, i) => ({ ...good, id: `k${i}` })));
    assert.deepEqual(thousand.body, { accepted: 1000, duplicates: 0 });
  });

  test('batches racing with the same ids count each once', async () => {
    const tenant = await service.tenant();
    const batch = Array.from({ length: 200 }, (_, i) => ({
      id: `race-${i}`,
      projectId: tenant.projectId,
      metric: 'calls',
      value: 1,
    }));
    const answers = await Promise.all(Array.from({ length: 8 }, () => record(batch)));
    assert.equal(
      answers.reduce((sum, a) => sum + a.body.accepted, 0),
      200,
    );
    assert.equal(await usageOf(tenant.projectId, 'calls'), 200);
  });

  test('batches at once over the same projects, metrics and days, in every order: none waits on another for good', async () => {
    // Each batch adds to the same day counters; taken in different orders, two batches would deadlock
    // (PostgreSQL breaks the circle after a second, failing one): each takes them in one order.
    const projects = await Promise.all(Array.from({ length: 6 }, () => service.tenant()));
    const days = [0, 1, 2].map((back) => new Date(Date.now() - back * 86_400_000).toISOString());
    // Rounds, so that each connection runs the statement often (PostgreSQL plans it anew after 5 runs).
    const ROUNDS = 6;
    const batches = Array.from({ length: 16 * ROUNDS }, (_, b) =>
      Array.from({ length: 120 }, (_, i) => ({
        id: `crossed-${b}-${i}`,
        projectId: (projects[(i * (b + 1)) % projects.length] as { projectId: string }).projectId,
        metric: (b + i) % 2 ? 'calls' : 'tokens',
        value: 1,
        time: days[(i + b) % days.length],
      })).sort(() => Math.random() - 0.5),
    );
    for (let round = 0; round < ROUNDS; round++) {
      const started = Date.now();
      const answers = await Promise.all(batches.slice(round * 16, round * 16 + 16).map((b) => record(b)));
      assert.deepEqual(
        answers.map((a) => a.status),
        answers.map(() => 200),
      );
      assert.ok(Date.now() - started < 2000, `round ${round} took ${Date.now() - started} ms`);
    }
    const { rows } = await service.db.query<{ total: number }>(
      `select sum(count)::int as total from usage_daily where capability = 'ai' and project_id = any($1::uuid[])`,
      [projects.map((p) => p.projectId)],
    );
    assert.equal(rows[0]?.total, 16 * ROUNDS * 120);
  });
});

describe('reservations', () => {
  test('reserve → 201; commit records what was used under its id, frees the rest; a figure of the day adds up', async () => {
    const tenant = await service.tenant();
    const reserved = await call('POST', '/capability/v1/reservations', {
      projectId: tenant.projectId,
      metric: 'tokens',
      amount: 40,
    });
    assert.equal(reserved.status, 201, reserved.text);
    assert.equal(reserved.body.remaining, 60);
    const today = await call('GET', `/capability/v1/limits/${tenant.projectId}/tokens`);
    assert.deepEqual(
      { ...today.body, resetsAt: undefined },
      { dailyLimit: 100, used: 0, reserved: 40, remaining: 60, resetsAt: undefined },
    );
    const committed = await call('POST', `/capability/v1/reservations/${reserved.body.id}/commit`, {
      amount: 25,
    });
    assert.equal(committed.status, 200, committed.text);
    assert.deepEqual(committed.body, { usageRecordId: reserved.body.id, expired: false, committed: 25 });
    const after = (await call('GET', `/capability/v1/limits/${tenant.projectId}/tokens`)).body;
    assert.deepEqual([after.used, after.reserved, after.remaining], [25, 0, 75]);
    // Committed again: the same answer, nothing more counted; the record id is taken.
    const again = await call('POST', `/capability/v1/reservations/${reserved.body.id}/commit`, {
      amount: 40,
    });
    assert.deepEqual(again.body, committed.body);
    const dup = await record([
      { id: reserved.body.id, projectId: tenant.projectId, metric: 'tokens', value: 9 },
    ]);
    assert.deepEqual(dup.body, { accepted: 0, duplicates: 1 });
    assert.equal(await usageOf(tenant.projectId, 'tokens'), 25);
    expectProblem(
      await call('POST', `/capability/v1/reservations/${reserved.body.id}/release`),
      409,
      'RESERVATION_SETTLED',
    );
  });

  test('past the limit → 429 with retry-after and RateLimit headers; release gives back; released cannot commit', async () => {
    const tenant = await service.tenant();
    const reserve = (amount: number) =>
      call('POST', '/capability/v1/reservations', { projectId: tenant.projectId, metric: 'tokens', amount });
    const big = await reserve(90);
    assert.equal(big.status, 201);
    const refused = await reserve(11);
    expectProblem(refused, 429, 'USAGE_LIMIT_EXCEEDED');
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.match(refused.headers.get('ratelimit-policy') ?? '', /"ai\.tokens";q=100;w=86400/);
    const released = await call('POST', `/capability/v1/reservations/${big.body.id}/release`);
    assert.deepEqual(released.body, { id: big.body.id, state: 'released' });
    assert.deepEqual(
      (await call('POST', `/capability/v1/reservations/${big.body.id}/release`)).body,
      released.body,
    );
    expectProblem(
      await call('POST', `/capability/v1/reservations/${big.body.id}/commit`, { amount: 1 }),
      409,
      'RESERVATION_SETTLED',
    );
    assert.equal((await reserve(100)).status, 201, 'the whole day is free again');
    expectProblem(
      await call('POST', `/capability/v1/reservations/${big.body.id}/commit`, { amount: 1 }),
      409,
      'RESERVATION_SETTLED',
    );
  });

  test('an expired reservation gives its allowance back by itself; committed late, its usage still counts', async () => {
    const tenant = await service.tenant();
    const short = await call('POST', '/capability/v1/reservations', {
      projectId: tenant.projectId,
      metric: 'tokens',
      amount: 100,
      ttlSeconds: 1,
    });
    assert.equal(short.status, 201);
    expectProblem(
      await call('POST', '/capability/v1/reservations', {
        projectId: tenant.projectId,
        metric: 'tokens',
        amount: 1,
      }),
      429,
      'USAGE_LIMIT_EXCEEDED',
    );
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const next = await call('POST', '/capability/v1/reservations', {
      projectId: tenant.projectId,
      metric: 'tokens',
      amount: 50,
    });
    assert.equal(next.status, 201, next.text);
    const late = await call('POST', `/capability/v1/reservations/${short.body.id}/commit`, { amount: 30 });
    assert.deepEqual(late.body, { usageRecordId: short.body.id, expired: true, committed: 30 });
    assert.equal(await usageOf(tenant.projectId, 'tokens'), 30);
  });

  test('an amount over the reservation, an unknown metric or project, another capability’s reservation → 4xx', async () => {
    const tenant = await service.tenant();
    const made = await call('POST', '/capability/v1/reservations', {
      projectId: tenant.projectId,
      metric: 'tokens',
      amount: 5,
    });
    expectProblem(
      await call('POST', `/capability/v1/reservations/${made.body.id}/commit`, { amount: 6 }),
      400,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await call('POST', '/capability/v1/reservations', {
        projectId: tenant.projectId,
        metric: 'nothing',
        amount: 1,
      }),
      400,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await call('POST', '/capability/v1/reservations', {
        projectId: '00000000-0000-4000-8000-000000000000',
        metric: 'tokens',
        amount: 1,
      }),
      404,
      'NOT_FOUND',
    );
    const other = await service.capability('other', { manifest: { ...MANIFEST, scopes: [] } });
    const theirs = await service.request('POST', `/capability/v1/reservations/${made.body.id}/commit`, {
      key: other.key,
      body: { amount: 1 },
      headers: idem(),
    });
    expectProblem(theirs, 404, 'NOT_FOUND');
    const noLimit = await call('POST', '/capability/v1/reservations', {
      projectId: tenant.projectId,
      metric: 'calls',
      amount: 10 ** 12,
    });
    assert.equal(noLimit.status, 201);
    assert.equal(noLimit.body.remaining, null);
  });

  test('never past the limit: 60 racing reservations on one process, then on two processes at once', async () => {
    const tenant = await service.tenant();
    const reserve = (baseUrl: string, i: number) =>
      fetch(`${baseUrl}/capability/v1/reservations`, {
        method: 'POST',
        headers: { 'x-api-key': cap.key, 'content-type': 'application/json', 'idempotency-key': `race-${i}` },
        body: JSON.stringify({ projectId: tenant.projectId, metric: 'tokens', amount: 3 }),
      }).then((r) => r.status);
    const here = await Promise.all(Array.from({ length: 60 }, (_, i) => reserve(service.baseUrl, i)));
    assert.equal(here.filter((s) => s === 201).length, 33, '33 × 3 = 99 of 100');
    assert.ok(here.every((s) => s === 201 || s === 429));

    const other = await service.tenant();
    const env = {
      DATABASE_URL: service.context.config.databaseUrl,
      PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      PLATFORM_RATE_LIMIT_PER_SECOND: '0',
      PLATFORM_LOG_LEVEL: 'warn',
    };
    const processes = await Promise.all([startProcess('serve', env), startProcess('serve', env)]);
    const racing = (i: number) =>
      fetch(`${processes[i % 2]?.baseUrl}/capability/v1/reservations`, {
        method: 'POST',
        headers: {
          'x-api-key': cap.key,
          'content-type': 'application/json',
          'idempotency-key': `race2-${i}`,
        },
        body: JSON.stringify({ projectId: other.projectId, metric: 'tokens', amount: 7 }),
      }).then((r) => r.status);
    const there = await Promise.all(Array.from({ length: 40 }, (_, i) => racing(i)));
    assert.equal(there.filter((s) => s === 201).length, 14, '14 × 7 = 98 of 100');
    const { rows } = await service.db.query<{ reserved: number }>(
      `select coalesce(sum(amount), 0)::int as reserved from usage_reservations where project_id = $1 and state = 'open'`,
      [other.projectId],
    );
    assert.equal(rows[0]?.reserved, 98);
  });

  test('a reserve retried with its idempotency key returns the same reservation: nothing held twice', async () => {
    const tenant = await service.tenant();
    const body = { projectId: tenant.projectId, metric: 'tokens', amount: 60 };
    const headers = { 'idempotency-key': 'one-reserve' };
    const first = await service.request('POST', '/capability/v1/reservations', {
      key: cap.key,
      body,
      headers,
    });
    const retried = await service.request('POST', '/capability/v1/reservations', {
      key: cap.key,
      body,
      headers,
    });
    assert.equal(retried.headers.get('idempotent-replayed'), 'true');
    assert.equal(retried.body.id, first.body.id);
    const today = (await call('GET', `/capability/v1/limits/${tenant.projectId}/tokens`)).body;
    assert.equal(today.reserved, 60);
  });
});
