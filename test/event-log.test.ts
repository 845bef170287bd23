// GET /core/v1/events: the project's events, newest first, each with its deliveries counted by state;
// filtered by type, by a delivery's state, and by a window of time; paged by cursor; the project's only.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SCANNED_EVENTS } from '../src/delivery-store/log.ts';
import { newId } from '../src/lib/ids.ts';
import { expectProblem, startService } from './helpers/app.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const service = await startService({
  worker: true,
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100', PLATFORM_RETRY_SCHEDULE: '0' },
});
const tenant = await service.tenant();
let n = 0;
const idem = () => ({ 'idempotency-key': `event-log-${++n}` });
const list = (query = '') => service.request('GET', `/core/v1/events${query}`, { key: tenant.key });

// Two endpoints: one that takes everything (and answers 204), one for pay.* that fails every attempt.
const ok = await startReceiver();
const failing = await startReceiver((_received, _index, response) => response.writeHead(500).end());
const endpoints: string[] = [];
for (const [url, eventTypes] of [
  [ok.url, ['*']],
  [failing.url, ['pay.*']],
] as const) {
  const created = await service.request('POST', '/core/v1/webhook-endpoints', {
    key: tenant.key,
    headers: idem(),
    body: { url, eventTypes },
  });
  assert.equal(created.status, 201, created.text);
  endpoints.push(created.body.id);
}
const before = new Date().toISOString();
const published: string[] = [];
for (const type of ['shop.order.placed', 'pay.payment.succeeded', 'shop.order.placed']) {
  const event = await service.request('POST', '/core/v1/events', {
    key: tenant.key,
    headers: idem(),
    body: { type, data: { n } },
  });
  published.push(event.body.eventId);
}
await eventually(async () => {
  const { body } = await list('?type=pay.payment.succeeded');
  return body.data[0]?.deliveries.dead === 1 && body.data[0].deliveries.delivered === 1;
});

describe('the project’s event log', () => {
  test('newest first, each with its deliveries by state; the platform’s own events of the project too', async () => {
    const { status, body } = await list();
    assert.equal(status, 200);
    // The dead delivery made the platform emit core.delivery.dead for the project, after the three.
    const [dead, ...rest] = body.data;
    assert.equal(dead.type, 'core.delivery.dead');
    assert.deepEqual(
      rest.map((e: { id: string }) => e.id),
      [...published].reverse(),
    );
    const [last, pay] = rest;
    assert.deepEqual(last.deliveries, { total: 1, pending: 0, delivered: 1, dead: 0, cancelled: 0 });
    assert.deepEqual(pay.deliveries, { total: 2, pending: 0, delivered: 1, dead: 1, cancelled: 0 });
    assert.equal(pay.type, 'pay.payment.succeeded');
    assert.equal(pay.redacted, false);
    assert.match(pay.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(body.nextCursor, null);
  });

  test('filtered by type, by a delivery’s state, by time; paged by cursor', async () => {
    const types = await list('?type=shop.order.placed');
    assert.deepEqual(
      types.body.data.map((e: { id: string }) => e.id),
      [published[2], published[0]],
    );
    const dead = await list('?state=dead');
    assert.deepEqual(
      dead.body.data.map((e: { id: string }) => e.id),
      [published[1]],
    );
    assert.equal((await list(`?since=${encodeURIComponent(new Date().toISOString())}`)).body.data.length, 0);
    assert.equal((await list(`?until=${encodeURIComponent(before)}`)).body.data.length, 0);
    assert.equal((await list(`?since=${encodeURIComponent(before)}`)).body.data.length, 4);
    const first = await list('?limit=3');
    assert.equal(first.body.data.length, 3);
    const second = await list(`?limit=3&cursor=${first.body.nextCursor}`);
    assert.deepEqual(
      [...first.body.data, ...second.body.data].slice(1).map((e: { id: string }) => e.id),
      [...published].reverse(),
    );
    assert.equal(second.body.nextCursor, null);
  });

  test('an endpoint’s attempts by hour: 24 hours, oldest first, the current one last', async () => {
    const now = Date.now();
    const stats = async (id: string) => {
      const { status, body } = await service.request('GET', `/core/v1/webhook-endpoints/${id}/stats`, {
        key: tenant.key,
      });
      assert.equal(status, 200);
      assert.equal(body.hours.length, 24);
      const last = Date.parse(body.hours.at(-1).hour);
      assert.ok(last <= now && now < last + 3_600_000, 'the current hour is last');
      assert.equal(body.from, body.hours[0].hour);
      assert.equal(Date.parse(body.to), last + 3_600_000);
      const sum = (member: 'succeeded' | 'failed') =>
        body.hours.reduce((total: number, hour: Record<string, number>) => total + (hour[member] ?? 0), 0);
      return { succeeded: sum('succeeded'), failed: sum('failed') };
    };
    assert.deepEqual(await stats(endpoints[0] as string), { succeeded: 3, failed: 0 });
    assert.deepEqual(await stats(endpoints[1] as string), { succeeded: 0, failed: 2 }); // two attempts
  });

  test('a filter reads a bounded number of events a request; the cursor goes on past them', async () => {
    const busy = await service.tenant();
    const listOf = (query: string) => service.request('GET', `/core/v1/events${query}`, { key: busy.key });
    // One rare event, then more common ones than a request reads, all in the last minute.
    const start = Date.now() - 60_000;
    const ids = Array.from({ length: SCANNED_EVENTS + 50 }, (_, i) => newId(new Date(start + i * 10)));
    const types = ids.map((_, i) => (i === 0 ? 'shop.rare.thing' : 'pay.payment.succeeded'));
    await service.db.query(
      `insert into events (project_id, id, type, data, created_at)
       select $1, id, type, '{}', uuid_time(id) from unnest($2::uuid[], $3::text[]) as t(id, type)`,
      [busy.projectId, ids, types],
    );
    const first = await listOf('?type=shop.rare.thing');
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body.data, [], 'not among the newest events read');
    assert.ok(first.body.nextCursor, 'but the history goes on');
    const second = await listOf(`?type=shop.rare.thing&cursor=${first.body.nextCursor}`);
    assert.deepEqual(
      second.body.data.map((e: { id: string }) => e.id),
      [ids[0]],
    );
    assert.equal(second.body.nextCursor, null);
    // Unfiltered, pages are full as ever.
    const plain = await listOf('?limit=100');
    assert.equal(plain.body.data.length, 100);
    assert.equal(plain.body.data[0].id, ids.at(-1));
  });

  test('bad filters are 400 naming the parameter; another project sees none of these', async () => {
    expectProblem(await list('?state=lost'), 400, 'VALIDATION_FAILED');
    expectProblem(await list('?since=yesterday'), 400, 'VALIDATION_FAILED');
    expectProblem(await list('?cursor=nonsense'), 400, 'VALIDATION_FAILED');
    expectProblem(await list('?limit=101'), 400, 'VALIDATION_FAILED');
    const other = await service.tenant();
    const theirs = await service.request('GET', '/core/v1/events', { key: other.key });
    assert.equal(theirs.status, 200);
    assert.deepEqual(theirs.body.data, []);
  });
});
