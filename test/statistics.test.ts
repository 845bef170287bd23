// The plans PostgreSQL keeps for the worker's statements: a delivery found by its key reads the primary key
// only (migration 0016); a day's partitions are analyzed again as they double (delivery-store/statistics.ts), so
// that a plan made while the day was small is made again; and the claim reads the due deliveries in order
// up to its limit, even with statistics that know nothing of the backlog (claim.ts, DUE_QUERY); and
// neither the claim nor the recorder reads every endpoint to find the few they concern; a claim's leases
// stay on their pages (migration 0025), and the claim and the recorder set up their deliveries' days only,
// not every day's partition, and find their rows by ctid or key even in plans made on a small queue; and a
// publish finds the endpoints that take its type without a function call for each (migration 0021).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';
import { eventTypeStore } from '../src/catalogue/store.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { CLAIM_SETTINGS, claim, DUE_QUERY, RUNS_BEHIND } from '../src/delivery-store/claim.ts';
import { DECIDED, LEASE, LEASED } from '../src/delivery-store/lease.ts';
import {
  APPEND_DELIVERED,
  RECORD_OUTCOMES,
  RECORD_SETTINGS,
  RUNS_CHANGING,
} from '../src/delivery-store/record.ts';
import { analyzeGrown } from '../src/delivery-store/statistics.ts';
import { subscribed } from '../src/lib/patterns.ts';
import { freshDatabase } from './helpers/database.ts';
import { eventually } from './helpers/receiver.ts';

const db = openDatabase(await freshDatabase());
after(() => db.close());
await migrate(db);
const today = `deliveries_${new Date().toISOString().slice(0, 10).replaceAll('-', '')}`;
const project = randomUUID();
// Autovacuum would analyze the partition at its own time, and these tests count analyses.
await db.query(`alter table ${today} set (autovacuum_enabled = false)`);

/** `count` of one project's deliveries to one endpoint, made now (today's partition) and due. */
const deliveries = (count: number, state = 'pending') =>
  db.query(
    `insert into deliveries (project_id, id, event_id, event_created_at, endpoint_id, kind, state, created_at)
     select $1, gen_random_uuid(), gen_random_uuid(), now(), $2, 'dispatch', $4, now()
       from generate_series(1, $3)`,
    [project, project, count, state],
  );

test('a delivery found by its key reads the primary key, in a plan made for any keys while the day is small', async () => {
  await deliveries(20);
  // The worker's lookup (claim.ts, store.ts): a batch of keys joined to the deliveries they name.
  const plan = await db.transaction(async (tx) => {
    // Only the choice of index is in question (a small day's plan may scan it until it is analyzed: below).
    await tx.query('set local plan_cache_mode = force_generic_plan');
    for (const way of ['seqscan', 'hashjoin', 'mergejoin']) await tx.query(`set local enable_${way} = off`);
    await tx.query(
      `prepare lookup(uuid[], uuid[], timestamptz[]) as
       update deliveries d set attempts = d.attempts
         from unnest($1, $2, $3) as r(project_id, id, event_created_at)
        where d.project_id = r.project_id and d.id = r.id and d.event_created_at = r.event_created_at`,
    );
    const { rows } = await tx.query<{ 'QUERY PLAN': string }>(
      `explain execute lookup(array['${project}'::uuid], array[gen_random_uuid()], array[now()])`,
    );
    await tx.query('deallocate lookup');
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
  const scans = [...plan.matchAll(new RegExp(`Index Scan using \\S+ on ${today}\\b`, 'g'))].map((m) => m[0]);
  assert.ok(scans.length > 0, plan);
  assert.deepEqual(
    scans.filter((s) => !s.includes('_pkey')),
    [],
    `today's deliveries are read other than by their key:\n${plan}`,
  );
});

test("a day's partition is analyzed from 1,000 rows on, and again each time it has doubled", async () => {
  const reltuples = async () =>
    (
      await db.query<{ n: number }>(`select reltuples::int as n from pg_class where oid = $1::regclass`, [
        today,
      ])
    ).rows[0]?.n;
  const liveRows = async () =>
    (
      await db.query<{ n: number }>(
        `select n_live_tup::int as n from pg_stat_user_tables where relid = $1::regclass`,
        [today],
      )
    ).rows[0]?.n;
  assert.deepEqual(await analyzeGrown(db), [], 'a small day is left to autovacuum');
  await deliveries(1200);
  // n_live_tup, which it reads, counts committed rows once the writing session reports them (within a second).
  await eventually(async () => (await analyzeGrown(db)).includes(today), 10_000, 'the analysis');
  assert.equal(await reltuples(), 1220);
  assert.deepEqual(await analyzeGrown(db), [], 'analyzed once, not at every pass');
  await deliveries(1000);
  await eventually(async () => (await liveRows()) === 2220, 10_000, 'the statistics to count the rows');
  assert.deepEqual(await analyzeGrown(db), [], 'not before it has doubled');
  await deliveries(300);
  await eventually(async () => (await analyzeGrown(db)).includes(today), 10_000, 'the analysis');
  assert.equal(await reltuples(), 2520);
});

/**
 * The plan PostgreSQL makes of `statement` for any values, as a named statement keeps it, under the
 * settings of the transaction it runs in; run with `args`.
 */
async function genericPlan(statement: string, args: string, settings: string): Promise<string> {
  return db.transaction(async (tx) => {
    await tx.query(`${settings}; set local plan_cache_mode = force_generic_plan`);
    await tx.query(`prepare planned as ${statement}`);
    const { rows } = await tx.query<{ 'QUERY PLAN': string }>(
      `explain (analyze, costs off, timing off, summary off) execute planned(${args})`,
    );
    await tx.query('deallocate planned');
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}

test('the claim walks the due deliveries in order and stops at its limit, with statistics taken before a backlog', async () => {
  await db.query('delete from delivery_queue');
  await db.query('analyze delivery_queue'); // nothing pending, as far as the planner knows
  await db.query(
    `insert into delivery_queue (delivery_id, project_id, event_id, event_created_at, endpoint_id)
     select gen_random_uuid(), $1, gen_random_uuid(), now(), $1 from generate_series(1, 3000)`,
    [project],
  );
  // A plan made for the values given would know the backlog no better; the claim keeps one plan for any
  // values (CLAIM_SETTINGS), which must walk the index too.
  const plan = await genericPlan(DUE_QUERY, `64, '{}', 0.25`, CLAIM_SETTINGS);
  assert.doesNotMatch(plan, /(^|->\s+)(Hash Join|Hash Right Join)\b/m, plan);
  assert.match(plan, /Index Scan using delivery_queue_due on delivery_queue/, plan);
  // No step reads more than the limit's rows (a sort of the 64 taken, to join them in order, is fine).
  const rows = [...plan.matchAll(/actual rows=(\d+)/g)].map((m) => Number(m[1]));
  assert.ok(rows.length > 0 && rows.every((n) => n <= 64), plan);
});

test('the claim and the recorder probe the endpoints they concern by key, at 1,000 endpoints as at 10', async () => {
  await db.query(`insert into projects (id, slug, name, mode) values ($1, $2, 'Statistics', 'test')`, [
    project,
    `statistics-${Date.now()}`,
  ]);
  await db.query(
    `insert into webhook_endpoints (project_id, id, url, event_types, active_secret, created_at)
     select $1, gen_random_uuid(), 'https://hooks.example.com/' || n, '{*}', '\\x00', now()
       from generate_series(1, 1000) n`,
    [project],
  );
  await db.query('analyze webhook_endpoints');
  const { rows: some } = await db.query<{ id: string }>(
    'select id from webhook_endpoints where project_id = $1 limit 3',
    [project],
  );
  const ids = `array[${some.map((r) => `'${r.id}'::uuid`)}]`;
  const projects = `array[${some.map(() => `'${project}'::uuid`)}]`;
  const plans = [
    await genericPlan(DUE_QUERY, `64, '{}', 0.25`, CLAIM_SETTINGS),
    await genericPlan(
      RUNS_CHANGING,
      `${projects}, ${ids}, array[true, true, true], array[0, 0, 1]`,
      CLAIM_SETTINGS,
    ),
  ];
  for (const plan of plans) {
    assert.doesNotMatch(plan, /Seq Scan on webhook_endpoints/, plan);
    assert.match(plan, /Index Scan using webhook_endpoints_pkey on webhook_endpoints/, plan);
  }
});

test("a claim's leases stay on their rows' pages (HOT), though it leases every row of a page at once", async () => {
  const owner = randomUUID();
  const endpoint = randomUUID();
  await db.query(`insert into projects (id, slug, name, mode) values ($1, $2, 'Leases', 'test')`, [
    owner,
    `leases-${Date.now()}`,
  ]);
  await db.query(
    `insert into webhook_endpoints (project_id, id, url, event_types, active_secret)
     values ($1, $2, 'https://hooks.example.com/leases', '{*}', '\\x00')`,
    [owner, endpoint],
  );
  await db.query('truncate delivery_queue');
  // Queued in one statement, as a burst of publishes leaves them: each page filled up to the fillfactor.
  await db.query(
    `insert into delivery_queue (delivery_id, project_id, event_id, event_created_at, endpoint_id)
     select gen_random_uuid(), $1, gen_random_uuid(), now(), $2 from generate_series(1, 200)`,
    [owner, endpoint],
  );
  const pages = async () => {
    const { rows } = await db.query<{ id: string; page: number; leased: boolean }>(
      `select delivery_id as id, (ctid::text::point)[0] as page, lease_until is not null as leased
         from delivery_queue`,
    );
    return rows;
  };
  const before = new Map((await pages()).map((r) => [r.id, r.page]));
  assert.ok(new Set(before.values()).size > 1, 'the rows fill more than one page');
  const token = randomUUID();
  await claim(db, { limit: 200, share: () => 200, leaseSeconds: 30, token, holder: 1, leftOut: [] });
  const after = await pages();
  assert.equal(after.filter((r) => r.leased).length, 200);
  // A version that left its page gave every index of the queue an entry (migration 0025).
  const moved = after.filter((r) => r.page !== before.get(r.id));
  assert.equal(moved.length, 0, `${moved.length} of 200 leases left their page`);
});

/**
 * The plans of the worker's statements: the claim's, leasing only and deciding too, and its read of the
 * runs behind ordered lanes' heads; the recorder's.
 */
async function workerPlans() {
  const today = "date_trunc('day', now()), date_trunc('day', now()) + interval '1 day'";
  const lease = `30, gen_random_uuid(), 1, '{}', '{}', ${today}`;
  const none = (n: number) => "'{}', ".repeat(n);
  return {
    leasing: await genericPlan(`${LEASE} ${LEASED}`, lease, CLAIM_SETTINGS),
    deciding: await genericPlan(
      `${LEASE}${DECIDED} ${LEASED}`,
      `${lease}, ${none(6)}${today}`,
      CLAIM_SETTINGS,
    ),
    following: await genericPlan(RUNS_BEHIND, `${none(5)}10`, CLAIM_SETTINGS),
    appending: await genericPlan(APPEND_DELIVERED, none(8).slice(0, -2), RECORD_SETTINGS),
    recording: await genericPlan(RECORD_OUTCOMES, `${none(13)}${today}, '{}'`, RECORD_SETTINGS),
  };
}

test("the claim and the recorder read and write their deliveries' days only, whatever the days kept", async () => {
  const { rows } = await db.query<{ days: number }>(
    "select count(*)::int as days from pg_inherits where inhparent = 'events'::regclass",
  );
  const days = rows[0]?.days ?? 0;
  assert.ok(days > 2, `${days} partitions of events`);
  // Left out as the statement starts: never set up, however many days the history keeps.
  const prunedToADay = (plan: string) =>
    plan.match(new RegExp(`Subplans Removed: ${days - 1}\\b`, 'g'))?.length;
  const { leasing, deciding, recording } = await workerPlans();
  // The lease reads its events (LEASED); a claim that also cancels updates their history (DECIDED); the
  // recorder updates the history of what did not go as delivered, and reads the events of the dead.
  assert.equal(prunedToADay(leasing), 1, leasing);
  assert.equal(prunedToADay(deciding), 2, deciding);
  assert.equal(prunedToADay(recording), 2, recording);
});

test('the claim and the recorder find their rows by ctid or key, in plans made while the tables are small', async () => {
  // Read whole, a small queue is cheaper than found row by row; a plan kept from then read a backlog
  // whole at every claim and record, until autovacuum analyzed the queue (CLAIM_SETTINGS, RECORD_SETTINGS).
  const plans = await workerPlans();
  for (const [name, plan] of Object.entries(plans)) {
    assert.doesNotMatch(
      plan,
      /Seq Scan on (delivery_queue|webhook_endpoints|deliveries|events)/,
      `${name}: ${plan}`,
    );
  }
  // Each head's lane is read by the index that keeps it in order, as far as the run's limit.
  assert.match(plans.following, /Index Scan using delivery_queue_lanes on delivery_queue/, plans.following);
});

test('a publish finds who takes its type with the patterns computed once, not a function call per endpoint', async () => {
  const other = randomUUID();
  await db.query(`insert into projects (id, slug, name, mode) values ($1, $2, 'Patterns', 'test')`, [
    other,
    `patterns-${Date.now()}`,
  ]);
  const patterns = [
    ['pay.*'],
    ['pay.payment.*', 'billing.x'],
    ['*'],
    ['core.*'],
    ['pay.refund.issued'],
    ['.*'],
  ];
  await db.query(
    `insert into webhook_endpoints (project_id, id, url, event_types, active_secret, created_at)
     select $1, gen_random_uuid(), 'https://hooks.example.com/' || n, p, '\\x00', now()
       from generate_series(0, 599) n, lateral (select ($2::jsonb -> (n % 6))) j(list),
            lateral (select array(select jsonb_array_elements_text(j.list))) t(p)`,
    [other, JSON.stringify(patterns)],
  );
  const takers = async (type: string) => {
    const { rows } = await db.query<{ list: string[]; n: number }>(
      `select w.event_types as list, count(*)::int as n from webhook_endpoints w
        where ${subscribed('$1', '$2')} group by 1 order by 1`,
      [other, type],
    );
    return rows.map((r) => [r.list.join(' '), r.n]);
  };
  assert.deepEqual(await takers('pay.payment.succeeded'), [
    ['*', 100],
    ['pay.*', 100],
    ['pay.payment.* billing.x', 100],
  ]);
  assert.deepEqual(await takers('pay.paymentx.other'), [
    ['*', 100],
    ['pay.*', 100],
  ]);
  assert.deepEqual(await takers('pay.refund.issued'), [
    ['*', 100],
    ['pay.*', 100],
    ['pay.refund.issued', 100],
  ]);
  assert.deepEqual(await takers('core.endpoint.paused'), [['core.*', 100]], '* takes no platform type');
  assert.deepEqual(await takers('.odd'), [
    ['*', 100],
    ['.*', 100],
  ]);
  const plan = await db.transaction(async (tx) => {
    await tx.query('set local plan_cache_mode = force_generic_plan');
    await tx.query(
      `prepare takers(uuid, text) as select w.id from webhook_endpoints w where ${subscribed('$1', '$2')}`,
    );
    const { rows } = await tx.query<{ 'QUERY PLAN': string }>(
      `explain (verbose, costs off) execute takers('${other}', 'pay.refund.issued')`,
    );
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
  const { rows: computed } = await db.query<{ type: string; patterns: string[] }>(
    `select type, subscription_patterns(type) as patterns from unnest($1::text[]) as type`,
    [['pay.payment.succeeded', 'core.endpoint.paused', 'plain', 'a..b', '.', 'é.ü']],
  );
  assert.deepEqual(
    computed.map((r) => [r.type, r.patterns]),
    [
      ['pay.payment.succeeded', ['pay.payment.succeeded', '*', 'pay.*', 'pay.payment.*']],
      ['core.endpoint.paused', ['core.endpoint.paused', 'core.*', 'core.endpoint.*']],
      ['plain', ['plain', '*']],
      ['a..b', ['a..b', '*', 'a.*', 'a..*']],
      ['.', ['.', '*', '.*']],
      ['é.ü', ['é.ü', '*', 'é.*']],
    ],
  );
  const filter = plan.split('\n').find((line) => line.includes('Filter:')) ?? '';
  assert.match(filter, /event_types &&/, plan);
  assert.doesNotMatch(filter, /subscri/, `no function of each endpoint's patterns:\n${plan}`);
});

test("the catalogue counts each type's subscribers with its patterns computed once per type", async () => {
  const owner = randomUUID();
  await db.query(`insert into projects (id, slug, name, mode) values ($1, $2, 'Catalogue', 'test')`, [
    owner,
    `catalogue-${Date.now()}`,
  ]);
  await db.query(
    `insert into webhook_endpoints (project_id, id, url, event_types, active_secret, created_at)
     select $1, gen_random_uuid(), 'https://hooks.example.com/' || n, p, '\\x00', now()
       from generate_series(0, 19) n,
            lateral (select case n % 4 when 0 then '{*}'::text[] when 1 then '{pay.*}' when 2 then '{core.*}'
                                     else '{pay.t1,bill.*}' end) t(p)`,
    [owner],
  );
  const types = [
    'pay.t1',
    'pay.t2',
    'bill.x',
    'core.endpoint.paused',
    'misc',
    ...Array.from({ length: 45 }, (_, i) => `x.t${i}`),
  ];
  // Calls of SQL functions are counted within the transaction (pg_stat_xact_user_functions).
  const { counts, calls } = await db.transaction(async (tx) => {
    await tx.query(`set local track_functions = 'all'`);
    const counts = await eventTypeStore(tx).subscribers(owner, types);
    const { rows } = await tx.query<{ calls: number }>(
      `select coalesce(sum(calls), 0)::int as calls from pg_stat_xact_user_functions
        where funcname in ('subscription_patterns', 'subscribes')`,
    );
    return { counts, calls: rows[0]?.calls };
  });
  assert.deepEqual(
    ['pay.t1', 'pay.t2', 'bill.x', 'core.endpoint.paused', 'misc', 'x.t0'].map((t) => counts.get(t)),
    [15, 10, 10, 5, 5, 5],
  );
  assert.equal(calls, types.length, 'one call per type, not per type and endpoint (1,000 here)');
});
