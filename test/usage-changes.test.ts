// Every project's usage for a capability granted usage:read (contract 0.4): one project's usage, and the
// change feed: every change of a day's total (a record, a late record, a reservation's commit, Core's own
// counting) once after the cursor before it, with the total as it stands, resumable forever; then the
// feed read while two processes write, every change seen and none out of order for a project-day.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectProblem, startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { freshDatabase } from './helpers/database.ts';
import { outageUrl, restartDatabase } from './helpers/outage.ts';
import { startProcess } from './helpers/process.ts';

const databaseUrl = await freshDatabase();
const service = await startService({ databaseUrl, env: { PLATFORM_RATE_LIMIT_PER_SECOND: '0' } });
const MANIFEST = {
  description: 'Metered',
  scopes: [],
  metrics: [
    { name: 'units', description: 'Units' },
    { name: 'tokens', description: 'Tokens', defaultDailyLimit: 1_000_000 },
  ],
  eventTypes: [],
  providers: [],
  erasure: null,
  gateway: null,
};
const metered = await service.capability('metered', { manifest: MANIFEST });
const billing = await service.capability('billing_feed');
await service.db.query(`update capabilities set grants = '{usage:read}' where name = 'billing_feed'`);
await service.context.directory.refresh();
const tenant = await service.tenant();
let n = 0;

const record = (projectId: string, value: number, time?: string, metric = 'units') =>
  service.request('POST', '/capability/v1/usage', {
    key: metered.key,
    body: { records: [{ id: `r-${++n}`, projectId, metric, value, ...(time ? { time } : {}) }] },
  });
interface Change {
  projectId: string;
  day: string;
  capability: string;
  metric: string;
  count: number;
}
const changes = async (cursor?: string, limit = 1000) => {
  const query = new URLSearchParams({ limit: String(limit), ...(cursor ? { cursor } : {}) });
  const page = await service.request('GET', `/capability/v1/usage/changes?${query}`, { key: billing.key });
  assert.equal(page.status, 200, page.text);
  return page.body as { data: Change[]; nextCursor: string };
};
/** Reads the feed from `cursor` to its end: every change, and where it ended. */
async function readAll(cursor?: string, limit = 1000) {
  const seen: Change[] = [];
  for (;;) {
    const page = await changes(cursor, limit);
    seen.push(...page.data);
    if (page.data.length === 0) return { seen, cursor: page.nextCursor };
    cursor = page.nextCursor;
  }
}
const today = new Date().toISOString().slice(0, 10);

/** Asserts that the last change a reader saw of each of these projects' totals is the total; how many. */
async function lastSeenAreTotals(projects: { projectId: string }[], last: Map<string, number>) {
  const { rows } = await service.db.query<{ project_id: string; day: string; metric: string; count: number }>(
    `select project_id, to_char(day, 'YYYY-MM-DD') as day, metric, count from usage_daily
      where capability = 'metered' and project_id = any($1::uuid[])`,
    [projects.map((p) => p.projectId)],
  );
  for (const row of rows)
    assert.equal(
      last.get(`${row.project_id}|${row.day}|${row.metric}`),
      row.count,
      'the last change seen is the total',
    );
  return rows.length;
}
const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();

describe('usage for a capability granted usage:read', () => {
  test('without the grant 403 naming it; GET /capability/v1/usage answers a project’s Usage; unknown → 404', async () => {
    const refused = await service.request('GET', '/capability/v1/usage/changes', { key: metered.key });
    expectProblem(refused, 403, 'INSUFFICIENT_SCOPE');
    assert.match(refused.body.detail, /usage:read/);
    expectProblem(
      await service.request('GET', `/capability/v1/usage?projectId=${tenant.projectId}`, {
        key: metered.key,
      }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    assert.equal((await record(tenant.projectId, 3)).status, 200);
    const usage = await service.request('GET', `/capability/v1/usage?projectId=${tenant.projectId}`, {
      key: billing.key,
    });
    assert.equal(usage.status, 200, usage.text);
    const own = await service.request('GET', '/core/v1/usage', { key: tenant.key });
    const countsOf = (body: { data: { capability: string }[] }) =>
      body.data.filter((d) => d.capability === 'metered');
    assert.deepEqual(countsOf(usage.body), countsOf(own.body), 'the counts the project itself reads');
    assert.deepEqual(usage.body.limits, own.body.limits);
    assert.deepEqual([usage.body.from, usage.body.to], [own.body.from, own.body.to]);
    expectProblem(
      await service.request('GET', '/capability/v1/usage?projectId=00000000-0000-4000-8000-000000000000', {
        key: billing.key,
      }),
      404,
      'NOT_FOUND',
    );
    for (const key of [tenant.key, (await service.operator()).key])
      expectProblem(
        await service.request('GET', '/capability/v1/usage/changes', { key }),
        403,
        'INSUFFICIENT_SCOPE',
      );
  });

  test('every change of a total once after the cursor before it, with the total as it stands', async () => {
    const project = await service.tenant(['events:write']);
    await service.context.meter.flush(); // what earlier tests' requests counted is in the feed before `start`
    const start = (await readAll()).cursor;
    assert.equal((await record(project.projectId, 5)).status, 200);
    // The feed is every project's: another project's request counted by the meter may flush at any time.
    const ofProject = (seen: Change[], capability?: string) =>
      seen.filter((c) => c.projectId === project.projectId && (!capability || c.capability === capability));
    const first = await readAll(start);
    assert.deepEqual(ofProject(first.seen, 'metered'), [
      { projectId: project.projectId, day: today, capability: 'metered', metric: 'units', count: 5 },
    ]);
    const quiet = await changes(first.cursor);
    assert.deepEqual(quiet, { data: [], nextCursor: first.cursor }, 'an empty page answers its cursor again');

    // A late record (three days ago), another today: the late day appears, today's total moves forward.
    await record(project.projectId, 2, daysAgo(3));
    await record(project.projectId, 4);
    const second = await readAll(first.cursor);
    const late = daysAgo(3).slice(0, 10);
    assert.deepEqual(
      ofProject(second.seen, 'metered')
        .map((c) => [c.day, c.count])
        .sort(),
      [
        [late, 2],
        [today, 9],
      ].sort(),
    );

    // A reservation's commit, and Core's own counting (an event published, flushed by the meter).
    const reserved = await service.request('POST', '/capability/v1/reservations', {
      key: metered.key,
      body: { projectId: project.projectId, metric: 'tokens', amount: 10 },
      headers: { 'idempotency-key': `res-${++n}` },
    });
    assert.equal(reserved.status, 201, reserved.text);
    const committed = await service.request(
      'POST',
      `/capability/v1/reservations/${reserved.body.id}/commit`,
      {
        key: metered.key,
        body: { amount: 7 },
        headers: { 'idempotency-key': `com-${n}` },
      },
    );
    assert.equal(committed.status, 200, committed.text);
    const published = await service.request('POST', '/core/v1/events', {
      key: project.key,
      body: { type: 'pay.payment.succeeded', data: {} },
      headers: { 'idempotency-key': `ev-${n}` },
    });
    assert.equal(published.status, 202, published.text);
    await service.context.meter.flush();
    const third = await readAll(second.cursor);
    const mine = ofProject(third.seen);
    // The publish counts as the project's request and its event; the commit as its tokens.
    assert.deepEqual(mine.map((c) => `${c.capability}/${c.metric}=${c.count}`).sort(), [
      'core/api_requests=1',
      'core/events_published=1',
      'metered/tokens=7',
    ]);

    // A page at a time gives the same changes as one read, in the same order.
    const whole = await readAll(start);
    const paged = await readAll(start, 1);
    assert.deepEqual(ofProject(paged.seen), ofProject(whole.seen));
  });

  test('a cursor it did not give, or a limit out of range, is 400', async () => {
    for (const query of ['cursor=abc', 'cursor=WzEsMiwzXQ', 'limit=0', 'limit=1001', 'limit=x'])
      expectProblem(
        await service.request('GET', `/capability/v1/usage/changes?${query}`, { key: billing.key }),
        400,
        'VALIDATION_FAILED',
      );
  });

  test('read while two processes write: every change seen, none out of order for a project-day', {
    timeout: 90_000,
  }, async () => {
    const serve = await startProcess('serve', {
      DATABASE_URL: databaseUrl,
      PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      PLATFORM_RATE_LIMIT_PER_SECOND: '0',
      PLATFORM_LOG_LEVEL: 'warn',
    });
    const projects = await Promise.all([1, 2, 3].map(() => service.tenant()));
    let cursor = (await readAll()).cursor;
    const last = new Map<string, number>();
    let writing = true;
    let reads = 0;
    const reader = (async () => {
      for (;;) {
        const done = !writing;
        const page = await readAll(cursor, 50);
        reads++;
        for (const c of page.seen) {
          const key = `${c.projectId}|${c.day}|${c.metric}`;
          assert.ok(c.count >= (last.get(key) ?? 0), `${key}: ${c.count} after ${last.get(key)}`);
          last.set(key, c.count);
        }
        cursor = page.cursor;
        if (done) return;
      }
    })();
    const bases = [service.baseUrl, serve.baseUrl];
    await Promise.all(
      Array.from({ length: 8 }, async (_, loop) => {
        for (let i = 0; i < 40; i++) {
          const records = projects.map((p, j) => ({
            id: `load-${loop}-${i}-${j}`,
            projectId: p.projectId,
            metric: 'units',
            value: 1 + ((i + j) % 3),
            ...(i % 5 === 0 ? { time: daysAgo(1 + (i % 3)) } : {}),
          }));
          const answer = await fetch(`${bases[loop % 2]}/capability/v1/usage`, {
            method: 'POST',
            headers: { 'x-api-key': metered.key, 'content-type': 'application/json' },
            body: JSON.stringify({ records }),
          });
          assert.equal(answer.status, 200);
        }
      }),
    );
    writing = false;
    await reader;
    assert.ok((await lastSeenAreTotals(projects, last)) >= 2);
    assert.ok(reads > 1, 'read while written');
  });

  test('read through a PostgreSQL restart while two processes write: every change seen, none out of order', {
    timeout: 120_000,
  }, async () => {
    const { url, proxy } = await outageUrl(databaseUrl);
    const serve = await startProcess('serve', {
      DATABASE_URL: url,
      PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      PLATFORM_RATE_LIMIT_PER_SECOND: '0',
      PLATFORM_LOG_LEVEL: 'warn',
    });
    const projects = await Promise.all([1, 2].map(() => service.tenant()));
    let cursor = (await readAll()).cursor;
    const last = new Map<string, number>();
    let writing = true;
    let written = false;
    let failedReads = 0;
    const reader = (async () => {
      for (;;) {
        const done = written;
        const query = new URLSearchParams({ limit: '100', cursor });
        const page = await service
          .request('GET', `/capability/v1/usage/changes?${query}`, { key: billing.key })
          .catch(() => ({ status: 0, body: undefined }));
        if (page.status !== 200) {
          failedReads++;
          await new Promise((resolve) => setTimeout(resolve, 100));
          continue;
        }
        const { data, nextCursor } = page.body as { data: Change[]; nextCursor: string };
        for (const c of data) {
          const key = `${c.projectId}|${c.day}|${c.metric}`;
          assert.ok(c.count >= (last.get(key) ?? 0), `${key}: ${c.count} after ${last.get(key)}`);
          last.set(key, c.count);
        }
        cursor = nextCursor;
        if (done && data.length === 0) return;
      }
    })();
    // Each batch is sent until it is answered 200 (its ids make a retry count once).
    const writers = Array.from({ length: 6 }, async (_, loop) => {
      for (let i = 0; writing; i++) {
        const records = projects.map((p, j) => ({
          id: `restart-${loop}-${i}-${j}`,
          projectId: p.projectId,
          metric: 'units',
          value: 1,
        }));
        for (;;) {
          const base = loop % 2 === 0 ? serve.baseUrl : service.baseUrl;
          const status = await fetch(`${base}/capability/v1/usage`, {
            method: 'POST',
            headers: { 'x-api-key': metered.key, 'content-type': 'application/json' },
            body: JSON.stringify({ records }),
            signal: AbortSignal.timeout(20_000),
          }).then(
            (r) => r.status,
            () => 0,
          );
          if (status === 200) break;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await restartDatabase(proxy);
    } finally {
      writing = false; // the writers end whatever happened
      await Promise.all(writers);
      written = true; // every batch answered 200: the reader drains the feed, then stops
    }
    await reader;
    assert.ok((await lastSeenAreTotals(projects, last)) >= 2);
    assert.equal(serve.child.exitCode, null, 'serve stayed up');
    assert.ok(proxy || failedReads > 0, 'the reader met the restart');
  });
});
