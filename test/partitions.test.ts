// The history's horizon: partitions by day made ahead, writes at a boundary and far in the future, whole
// days dropped at the horizon (never a pending delivery), a project's shorter retention, lookups by id in
// one partition, erasure and replay across days, the migration of existing history, and two workers.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { historyRetention } from '../src/delivery-store/retention.ts';
import { stateOf } from '../src/delivery-store/state.ts';
import { eventStore } from '../src/events/store.ts';
import { manualClock, utcDay } from '../src/lib/clock.ts';
import { newId } from '../src/lib/ids.ts';
import { runMaintenance } from '../src/process/maintenance.ts';
import { startService } from './helpers/app.ts';
import { freshDatabase } from './helpers/database.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const DAY = 86_400_000;
const day = (offset: number) => new Date(Date.now() + offset * DAY).toISOString().slice(0, 10);
const clock = manualClock(new Date());
const service = await startService({
  clock,
  env: {
    PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
    PLATFORM_RATE_LIMIT_PER_SECOND: '0',
    PLATFORM_WORKER_POLL_MS: '100',
  },
  worker: true,
});
const maintain = () => runMaintenance({ ...service.context, clock });
const retention = historyRetention(service.db);
let n = 0;
const idem = () => ({ 'idempotency-key': `h-${++n}` });
const days = async (table = 'events') =>
  (
    await service.db.query(
      `select substr(c.relname, length($1) + 2) as day from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = $1::regclass order by 1`,
      [table],
    )
  ).rows.map((r) => r.day as string);
const partitionOf = async (id: string) =>
  (await service.db.query('select tableoid::regclass::text as t from events where id = $1', [id])).rows[0]
    ?.t as string | undefined;

/**
 * An event `offsetDays` from now, written as the service writes it: its id carries its time, and the event
 * and its delivery go in one statement (so a maintenance pass never sees one without the other).
 */
async function eventAt(projectId: string, offsetDays: number, endpointId?: string, state = 'delivered') {
  const id = newId(new Date(Date.now() + offsetDays * DAY));
  await service.db.query(
    `with event as (
       insert into events (project_id, id, type, data, created_at)
       values ($1, $2, 'pay.old.thing', '{"n": 1}', uuid_time($2))
     ), delivery as (
       insert into deliveries (project_id, id, event_id, event_created_at, endpoint_id, kind, state, created_at)
       select $1, uuid_v7_at(uuid_time($2)), $2, uuid_time($2), $3, 'dispatch', $4, uuid_time($2)
        where $3::uuid is not null
       returning *
     )
     insert into delivery_queue (delivery_id, project_id, event_id, event_created_at, endpoint_id, next_attempt_at)
     select id, project_id, event_id, event_created_at, endpoint_id, now() + interval '1 day' from delivery
      where state = 'pending'`,
    [projectId, id, endpointId ?? null, state],
  );
  return id;
}

describe('partitioned history', () => {
  test('a partition a day, made a week ahead by maintenance, once, even by two workers at once', async () => {
    // Days counted from the clock maintenance ran on, not from the template's migration or a later read of
    // the real clock: a run that crosses midnight UTC reads the same week.
    clock.set(new Date());
    await maintain();
    const today = clock.now().getTime();
    const made = await days();
    for (let i = 0; i <= 7; i++)
      assert.ok(made.includes(utcDay(today + i * DAY).replace(/-/g, '')), `day +${i}`);
    assert.ok(made.includes('default'));
    for (const table of ['event_subjects', 'deliveries', 'delivery_attempts'])
      assert.deepEqual(await days(table), made, `${table} has the same days`);
    clock.set(new Date(today + 20 * DAY));
    try {
      const other = openDatabase(service.context.config.databaseUrl as string);
      await Promise.all([maintain(), runMaintenance({ ...service.context, db: other, clock })]);
      await other.close();
      const after = await days();
      for (let i = 20; i <= 27; i++)
        assert.ok(after.includes(utcDay(today + i * DAY).replace(/-/g, '')), `day +${i}`);
      // Each day of the history keeps 0011's fillfactor of 70 (migration 0024: a delivered row is not updated).
      const { rows } = await service.db.query(
        `select c.relname, c.reloptions from pg_inherits i join pg_class c on c.oid = i.inhrelid
          where i.inhparent = 'deliveries'::regclass`,
      );
      for (const row of rows) assert.deepEqual(row.reloptions, ['fillfactor=70'], row.relname);
    } finally {
      clock.set(new Date());
    }
  });

  test('a write at a day boundary lands in its day; one far in the future waits in the default, then moves', async () => {
    const tenant = await service.tenant();
    const midnight = Date.UTC(
      new Date().getUTCFullYear(),
      new Date().getUTCMonth(),
      new Date().getUTCDate() + 1,
    );
    for (const [time, expected] of [
      [midnight - 1, day(0)],
      [midnight, day(1)],
    ] as const) {
      clock.set(new Date(time));
      const published = await service.request('POST', '/core/v1/events', {
        key: tenant.key,
        body: { type: 'pay.edge.thing', data: {} },
        headers: idem(),
      });
      assert.equal(published.status, 202, published.text);
      assert.equal(await partitionOf(published.body.eventId), `events_${expected.replace(/-/g, '')}`);
    }
    clock.set(new Date(Date.now() + 60 * DAY));
    const future = await service.request('POST', '/core/v1/events', {
      key: tenant.key,
      body: { type: 'pay.future.thing', data: {} },
      headers: idem(),
    });
    assert.equal(future.status, 202, future.text);
    assert.equal(await partitionOf(future.body.eventId), 'events_default');
    await maintain();
    assert.equal(await partitionOf(future.body.eventId), `events_${day(60).replace(/-/g, '')}`);
    const read = await service.request('GET', `/core/v1/events/${future.body.eventId}`, { key: tenant.key });
    assert.equal(read.status, 200, read.text);
    clock.set(new Date());
  });

  test('a lookup by id reads one partition', async () => {
    const tenant = await service.tenant();
    await retention.makeDay(day(-3));
    const id = await eventAt(tenant.projectId, -3);
    const { rows } = await service.db.query(
      `explain (format json, costs off) select * from events e where e.project_id = $1 and e.id = $2 and e.created_at = uuid_time($2)`,
      [tenant.projectId, id],
    );
    const plan = JSON.stringify(rows[0]!['QUERY PLAN']);
    const scanned = [...plan.matchAll(/"Relation Name":"(events_[^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(scanned, [`events_${day(-3).replace(/-/g, '')}`], plan);
  });

  test('retention drops exactly the days past the horizon, never one with a pending delivery', async () => {
    const tenant = await service.tenant();
    const receiver = await startReceiver();
    const endpoint = (
      await service.request('POST', '/core/v1/webhook-endpoints', {
        key: tenant.key,
        body: { url: receiver.url, eventTypes: ['pay.nothing.matches'] },
        headers: idem(),
      })
    ).body.id;
    // The events first (they wait in the default partition), then their days, which take them in: the
    // workers' own maintenance may run at any moment, and never sees a day before its deliveries.
    const old = await eventAt(tenant.projectId, -40, endpoint);
    const pending = await eventAt(tenant.projectId, -35, endpoint, 'pending');
    const kept = await eventAt(tenant.projectId, -29, endpoint);
    for (const offset of [-40, -35, -31, -30, -29]) await retention.makeDay(day(offset));
    await maintain();
    const after = await days();
    assert.ok(!after.includes(day(-40).replace(/-/g, '')), 'past the horizon: dropped');
    assert.ok(!after.includes(day(-31).replace(/-/g, '')));
    assert.ok(after.includes(day(-35).replace(/-/g, '')), 'its delivery was pending: kept');
    assert.ok(after.includes(day(-29).replace(/-/g, '')) && after.includes(day(-30).replace(/-/g, '')));
    assert.equal(await partitionOf(old), undefined);
    assert.equal(await partitionOf(kept), `events_${day(-29).replace(/-/g, '')}`);
    const { rows } = await service.db.query('select state, last_error from deliveries where event_id = $1', [
      pending,
    ]);
    assert.deepEqual(rows, [
      { state: 'dead', last_error: 'not delivered within the retention of its history' },
    ]);
    const health = await eventually(
      async () => {
        const body = (await service.request('GET', '/api/health', { key: tenant.key })).body;
        return body.webhooksDead24h >= 1 && body;
      },
      15_000,
      'health to count it',
    );
    assert.equal(health.history.horizon, day(-30));
    // A day later it is dropped too.
    await service.db.query(
      `update deliveries set dead_at = now() - interval '25 hours' where event_id = $1`,
      [pending],
    );
    await maintain();
    assert.ok(!(await days()).includes(day(-35).replace(/-/g, '')));
    for (const table of ['event_subjects', 'deliveries', 'delivery_attempts'])
      assert.ok(!(await days(table)).includes(day(-35).replace(/-/g, '')), `${table} goes with it`);
  });

  test('a project keeping less: 404 past its horizon, history stops there, payloads redacted', async () => {
    const tenant = await service.tenant();
    await service.db.query('update projects set retention_days = 2 where id = $1', [tenant.projectId]);
    const receiver = await startReceiver();
    const endpoint = (
      await service.request('POST', '/core/v1/webhook-endpoints', {
        key: tenant.key,
        body: { url: receiver.url, eventTypes: ['pay.nothing.matches'] },
        headers: idem(),
      })
    ).body.id;
    const old = await eventAt(tenant.projectId, -5, endpoint);
    const recent = await eventAt(tenant.projectId, -1, endpoint);
    const get = (id: string) => service.request('GET', `/core/v1/events/${id}`, { key: tenant.key });
    assert.equal((await get(old)).status, 404);
    assert.equal((await get(recent)).status, 200);
    const replay = await service.request('POST', `/core/v1/events/${old}/replay`, {
      key: tenant.key,
      headers: idem(),
    });
    assert.equal(replay.status, 404);
    const history = (
      await service.request('GET', `/core/v1/webhook-endpoints/${endpoint}/deliveries`, { key: tenant.key })
    ).body.data;
    assert.deepEqual(
      history.map((d: { eventId: string }) => d.eventId),
      [recent],
    );
    await maintain();
    const { rows } = await service.db.query('select id, data, redacted_at from events where id = any ($1)', [
      [old, recent],
    ]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    assert.deepEqual(byId.get(old)?.data, { redacted: true });
    assert.deepEqual(byId.get(recent)?.data, { n: 1 });
  });

  test('erasure and replay across days', async () => {
    const tenant = await service.tenant();
    const receiver = await startReceiver();
    await service.request('POST', '/core/v1/webhook-endpoints', {
      key: tenant.key,
      body: { url: receiver.url, eventTypes: ['pay.subject.thing'] },
      headers: idem(),
    });
    await retention.makeDay(day(-3));
    const ids: string[] = [];
    for (const offset of [-3, 0]) {
      clock.set(new Date(Date.now() + offset * DAY));
      const published = await service.request('POST', '/core/v1/events', {
        key: tenant.key,
        body: {
          type: 'pay.subject.thing',
          data: { who: 'ann' },
          subjects: [{ type: 'external_id', value: 'ann' }],
        },
        headers: idem(),
      });
      assert.equal(published.status, 202, JSON.stringify(published.body));
      ids.push(published.body.eventId);
    }
    clock.set(new Date());
    await receiver.waitFor(2);
    const replay = () =>
      service.request('POST', `/core/v1/events/${ids[0]}/replay`, { key: tenant.key, headers: idem() });
    // Accepted once the first dispatch's attempt is recorded.
    const replayed = await eventually(async () => {
      const answer = await replay();
      return answer.status === 200 && answer;
    });
    assert.equal(replayed.body.deliveries, 1, replayed.text);
    await receiver.waitFor(3);
    const { rows } = await service.db.query(
      'select tableoid::regclass::text as t from deliveries where event_id = $1 order by created_at',
      [ids[0]],
    );
    assert.deepEqual(
      rows.map((r) => r.t),
      Array(2).fill(`deliveries_${day(-3).replace(/-/g, '')}`),
      'a replay lives with its event',
    );
    const erased = await service.request('POST', '/core/v1/subjects/erase', {
      key: tenant.key,
      body: { subject: { type: 'external_id', value: 'ann' } },
      headers: idem(),
    });
    assert.equal(
      erased.body.capabilities.find((c: { capability: string }) => c.capability === 'core').erased,
      2,
    );
  });

  test('the migration moves existing history into partitions; old ids are still found and delivered', async () => {
    const url = await freshDatabase();
    const db = openDatabase(url);
    try {
      await migrate(db, '0010_management');
      const { rows } = await db.query(
        `insert into projects (slug, name, mode) values ('legacy', 'Legacy', 'test') returning id`,
      );
      const projectId = rows[0]?.id;
      await db.query(
        `insert into events (project_id, id, type, data, created_at)
         select $1, gen_random_uuid(), 'pay.legacy.thing', jsonb_build_object('n', i), now() - make_interval(days => i % 3, secs => i * 0.001234)
           from generate_series(1, 300) as i`,
        [projectId],
      );
      await db.query(
        `insert into deliveries (project_id, event_id, endpoint_id, kind, state, next_attempt_at, created_at)
         select project_id, id, gen_random_uuid(), 'dispatch', 'delivered', now(), created_at from events`,
      );
      await db.query(
        `insert into delivery_attempts (project_id, delivery_id, attempt, started_at, duration_ms, succeeded)
         select project_id, id, 1, now(), 3, true from deliveries`,
      );
      await migrate(db);
      const counts = await db.query(
        `select (select count(*) from events)::int as events, (select count(*) from deliveries)::int as deliveries,
                (select count(*) from delivery_attempts)::int as attempts,
                (select count(*) from events_default)::int as defaulted,
                (select count(distinct tableoid) from events)::int as partitions`,
      );
      assert.deepEqual(counts.rows[0], {
        events: 300,
        deliveries: 300,
        attempts: 300,
        defaulted: 0,
        partitions: 3,
      });
      // Times kept to the millisecond, as the service reads them back; every delivery with its event.
      const precise = await db.query(
        `select (select count(*) from events where created_at <> date_trunc('milliseconds', created_at))::int as loose,
                (select count(*) from deliveries d join events e on e.id = d.event_id and e.created_at = d.event_created_at)::int as joined`,
      );
      assert.deepEqual(precise.rows[0], { loose: 0, joined: 300 });
      // An id of version 4 (made before ids carried time) is found all the same.
      const legacy = (await db.query('select id from events limit 1')).rows[0]!.id as string;
      assert.equal((await eventStore(db).find(projectId, legacy, 30))?.id, legacy);
    } finally {
      await db.close();
    }
  });
});

describe('the history keeps working for a worker', () => {
  test('deliveries of every day are claimed and completed in their own partitions', async () => {
    const tenant = await service.tenant();
    const receiver = await startReceiver();
    await service.request('POST', '/core/v1/webhook-endpoints', {
      key: tenant.key,
      body: { url: receiver.url, eventTypes: ['*'] },
      headers: idem(),
    });
    for (const offset of [-2, -1, 0, 1]) {
      clock.set(new Date(Date.now() + offset * DAY));
      const published = await service.request('POST', '/core/v1/events', {
        key: tenant.key,
        body: { type: 'pay.daily.thing', data: { offset } },
        headers: idem(),
      });
      assert.equal(published.status, 202, JSON.stringify(published.body));
      assert.equal(published.body.deliveries, 1);
    }
    clock.set(new Date());
    // Once, in a whole run of the suite, one of the four had not arrived after 20 s, its cause unknown (each
    // publish is now held to its answer above): if it comes again, the failure says what each delivery was.
    await receiver.waitFor(4).catch(async (error: Error) => {
      const { rows } = await service.db.query(
        `select d.event_created_at, ${stateOf('d', 'q')} as state, q.next_attempt_at, q.lease_until,
                (select json_agg(json_build_object('at', a.started_at, 'ms', a.duration_ms, 'status', a.status_code,
                                                   'error', a.error)) from delivery_attempts a
                  where a.delivery_id = d.id and a.event_created_at = d.event_created_at) as attempts
           from deliveries d left join delivery_queue q on q.delivery_id = d.id
          where d.project_id = $1`,
        [tenant.projectId],
      );
      throw new Error(`${error.message}: ${JSON.stringify(rows)}`);
    });
    await eventually(async () => {
      const { rows } = await service.db.query(
        `select count(*)::int as n from deliveries d join delivery_attempts a
           on a.delivery_id = d.id and a.event_created_at = d.event_created_at
          where d.project_id = $1 and ${stateOf('d')} = 'delivered'`,
        [tenant.projectId],
      );
      return rows[0]?.n === 4;
    });
  });
});
