// Statements committed together (src/db/group-commit.ts): offered while others are being written, they go
// in one transaction; a batch that fails commits nothing, and each of its statements meets its own outcome
// alone. Publishes go this way (their sole statement only inserts), and creates of webhook endpoints (theirs
// also updates their project's row: batches take such rows' locks in one order).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { type Database, openDatabase } from '../src/db/database.ts';
import { startService, type Tenant, type TestResponse, type TestService } from './helpers/app.ts';
import { freshDatabase } from './helpers/database.ts';
import { eventually } from './helpers/receiver.ts';

const db = openDatabase(await freshDatabase());
after(() => db.close());
await db.query('create table offered (id int primary key, note text)');
await db.query('create table counted (id int primary key, n int not null default 0)');
await db.query('insert into counted (id) select generate_series(0, 32)');

const insert = (id: number, note = '') => ({
  name: 'offered-insert',
  text: 'insert into offered (id, note) values ($1, $2)',
  values: [id, note],
});
/** How many transactions wrote the table's rows (each transaction that inserts has an id of its own). */
const transactions = async () =>
  Number((await db.query('select count(distinct xmin::text) as n from offered')).rows[0]?.n);
/** A statement that updates row `id` of `counted` (and logs it, in a row of its own). */
const count = (id: number, note = '') => ({
  name: 'counted-update',
  text: `with row as (update counted set n = n + 1 where id = $1 returning id)
         insert into offered (id, note) select $2, $3 from row`,
  values: [id, 1_000_000 + logged++, note],
});
let logged = 0;
/** Holds row `id` of `counted` until the returned function commits. */
const hold = async (id: number) => {
  const client = await db.pool.connect();
  await client.query('begin');
  await client.query('select from counted where id = $1 for update', [id]);
  return async () => {
    await client.query('commit');
    client.release();
  };
};
/** Resolves once `n` statements of `on`'s database wait for a lock. */
const waitingForLocks = async (n: number, on: Database = db) =>
  eventually(
    async () =>
      (
        await on.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity
            where wait_event_type = 'Lock' and datname = current_database()`,
        )
      ).rows[0]?.n === n,
    20_000,
    `${n} statements waiting for a lock`,
  );
/**
 * Requests sent at once while the records' table is locked against writes: the first two writes wait for
 * the lock and the rest gather behind them, as they would behind a busy database.
 */
const gathered = async (service: TestService, sends: (() => Promise<TestResponse>)[]) => {
  const blocker = await service.db.pool.connect();
  await blocker.query('begin');
  await blocker.query('lock table idempotency_keys in share mode');
  const sent = Promise.all(sends.map((send) => send()));
  try {
    await waitingForLocks(2, service.db);
    await new Promise((resolve) => setTimeout(resolve, 500)); // the other requests reach their statements
  } finally {
    await blocker.query('commit');
    blocker.release();
  }
  return sent;
};
const outcomes = (offers: Promise<void>[]) =>
  Promise.all(
    offers.map((offer) =>
      offer.then(
        () => 'ok',
        (error: { code?: string }) => error.code,
      ),
    ),
  );

describe('statements committed together', () => {
  test('offered at once, they commit in a few transactions, every one of them', async () => {
    await db.query('truncate offered');
    const results = await outcomes(Array.from({ length: 40 }, (_, i) => db.commitTogether(insert(i))));
    assert.deepEqual(results, Array(40).fill('ok'));
    const { rows } = await db.query('select count(*)::int as n from offered');
    assert.equal(rows[0]?.n, 40);
    // Two go alone at once; the other 38 wait for them and go in batches.
    assert.ok((await transactions()) <= 6, `${await transactions()} transactions for 40 statements`);
  });

  test('one alone goes at once, in a transaction of its own', async () => {
    await db.query('truncate offered');
    for (let i = 0; i < 3; i++) await db.commitTogether(insert(i));
    assert.equal(await transactions(), 3);
  });

  test('a statement that fails fails alone: the others of its batch commit, each once', async () => {
    await db.query('truncate offered');
    await db.query(`insert into offered values (1000, 'there before')`);
    const offers = Array.from({ length: 30 }, (_, i) => db.commitTogether(insert(i)));
    offers.push(db.commitTogether(insert(1000, 'a duplicate'))); // 23505
    offers.push(db.commitTogether(insert(2000, 'nul \u0000 in text'))); // 22021, refused before sending
    offers.push(...Array.from({ length: 10 }, (_, i) => db.commitTogether(insert(100 + i))));
    const results = await outcomes(offers);
    assert.deepEqual(results.slice(0, 30), Array(30).fill('ok'));
    assert.deepEqual(results.slice(30, 32), ['23505', '22021']);
    assert.deepEqual(results.slice(32), Array(10).fill('ok'));
    const { rows } = await db.query<{ n: number; kept: string }>(
      `select count(*)::int as n, (select note from offered where id = 1000) as kept from offered`,
    );
    assert.deepEqual(rows[0], { n: 41, kept: 'there before' });
  });

  test('batches take the locks of the rows they update in one order: two batches never deadlock', async () => {
    await db.query('truncate offered');
    // Two statements occupy both writers, waiting for row 0; the 64 offered meanwhile form two batches
    // of 32, which update rows 1 to 32, one offered upwards, the other downwards. Row 17 is held
    // until both batches wait: written as offered, the first would hold 1 to 16 and the second 32 to 18.
    const writersFree = await hold(0);
    const occupied = [db.commitTogether(count(0), 'r00'), db.commitTogether(count(0), 'r00')];
    await waitingForLocks(2);
    const release17 = await hold(17);
    const rows = Array.from({ length: 32 }, (_, i) => i + 1);
    const offers = [...rows, ...rows.toReversed()].map((id) =>
      db.commitTogether(count(id), `r${String(id).padStart(2, '0')}`),
    );
    await writersFree();
    await waitingForLocks(2); // the first batch on row 17, the second on it or behind the first
    await release17();
    const results = await outcomes([...occupied, ...offers]);
    assert.deepEqual(results, Array(66).fill('ok'));
    // Written in order, the two batches commit as two transactions; a deadlock would roll one back, and
    // its 32 statements would go alone: 32 more.
    assert.equal(await transactions(), 2 + 2);
    const { rows: counts } = await db.query<{ n: number }>('select sum(n)::int as n from counted');
    assert.equal(counts[0]?.n, 66);
  });

  test('a statement that failed has let go of its locks by the time its failure is reported', async () => {
    // Two thousand open cursors make PostgreSQL's end of the failed transaction slow enough to be seen.
    const failing = {
      text: `do $$ declare c refcursor; begin
               perform pg_advisory_xact_lock(4242);
               for i in 1..2000 loop c := null; open c for select i; end loop;
               raise exception 'fails';
             end $$`,
    };
    const other = await db.pool.connect(); // connected already: it asks at once
    try {
      for (let i = 0; i < 5; i++) {
        const lockFree = await db.commitTogether(failing).then(
          () => 'committed',
          async () => (await other.query('select pg_try_advisory_xact_lock(4242) as free')).rows[0]?.free,
        );
        assert.equal(lockFree, true);
      }
    } finally {
      other.release();
    }
  });
});

describe('publishes committed together', async () => {
  const service = await startService();
  const owner = await service.tenant();
  const created = await service.request('POST', '/core/v1/webhook-endpoints', {
    key: owner.key,
    body: { url: 'https://93.184.216.34/hook', eventTypes: ['shop.*'] },
    headers: { 'idempotency-key': 'endpoint' },
  });
  assert.equal(created.status, 201);
  const publish = (n: number, key: string) =>
    service.request('POST', '/core/v1/events', {
      key: owner.key,
      body: { type: 'shop.order.paid', data: { n } },
      headers: { 'idempotency-key': key },
    });
  assert.equal((await publish(0, 'first')).status, 202); // the first of its kind predicts the rest

  /** The project's events since `since` (its events' count before), and the transactions that wrote them. */
  const written = async (since: number) => {
    const { rows } = await service.db.query<{ events: number; transactions: number; deliveries: number }>(
      `select count(*)::int as events, count(distinct e.xmin::text)::int as transactions,
              (select count(*)::int from deliveries d where d.project_id = $1) as deliveries
         from (select xmin, * from events where project_id = $1 order by id offset $2) e`,
      [owner.projectId, since],
    );
    return rows[0];
  };

  test('publishes that gather commit a batch at a time; each is answered, stored once, replayed alike', async () => {
    const answers = await gathered(
      service,
      Array.from({ length: 50 }, (_, n) => () => publish(n, `k-${n}`)),
    );
    for (const answer of answers) assert.deepEqual(answer.body.deliveries, 1, answer.text);
    // The two that waited, and the 48 behind them in batches of at most 32: 4 transactions (one a
    // publish would be 50).
    const { events, transactions, deliveries } = (await written(1)) as { [k: string]: number };
    assert.deepEqual({ events, deliveries }, { events: 50, deliveries: 51 });
    assert.ok(Number(transactions) <= 6, `${transactions} transactions for 50 publishes`);
    for (const [n, answer] of answers.slice(0, 3).entries()) {
      const replay = await publish(n, `k-${n}`);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(replay.body, answer.body);
    }
  });

  test('one key twice in a batch fails it: each publish then goes alone, and the key commits once', async () => {
    const answers = await gathered(service, [
      ...Array.from({ length: 20 }, (_, n) => () => publish(n, `t-${n}`)),
      () => publish(99, 'twice'),
      () => publish(99, 'twice'),
    ]);
    for (const answer of answers.slice(0, 20)) assert.deepEqual(answer.body.deliveries, 1, answer.text);
    const twice = answers.slice(20);
    assert.ok(
      twice.every((a) => a.status === 202 || a.status === 409),
      `the key sent twice: ${twice.map((a) => a.status).join(', ')}`,
    );
    const done = twice.filter((a) => a.status === 202);
    assert.ok(done.length >= 1 && done.every((a) => a.body.eventId === done[0]?.body.eventId));
    const { events, deliveries } = (await written(51)) as { events: number; deliveries: number };
    assert.deepEqual({ events, deliveries }, { events: 21, deliveries: 72 });
  });
});

describe('creates committed together', async () => {
  const service = await startService();
  const tenants = await Promise.all(Array.from({ length: 5 }, () => service.tenant()));
  const create = (key: string, n: number, idempotencyKey: string) =>
    service.request('POST', '/core/v1/webhook-endpoints', {
      key,
      body: { url: `https://93.184.216.34/hook/${n}`, eventTypes: ['shop.order.paid'] },
      headers: { 'idempotency-key': idempotencyKey },
    });

  test('creates of several projects that gather commit a batch at a time, each once, replayed alike', async () => {
    const sends = tenants.flatMap((tenant, t) =>
      Array.from({ length: 8 }, (_, n) => () => create(tenant.key, n, `c-${t}-${n}`)),
    );
    const answers = await gathered(service, sends);
    for (const answer of answers) assert.equal(answer.status, 201, answer.text);
    const { rows } = await service.db.query<{ endpoints: number; transactions: number; counted: number }>(
      `select count(*)::int as endpoints, count(distinct e.xmin::text)::int as transactions,
              (select sum(webhook_endpoints)::int from projects where id = any($1::uuid[])) as counted
         from webhook_endpoints e where e.project_id = any($1::uuid[])`,
      [tenants.map((t) => t.projectId)],
    );
    const { endpoints, transactions, counted } = rows[0] as { [k: string]: number };
    assert.deepEqual({ endpoints, counted }, { endpoints: 40, counted: 40 });
    // The two that waited, and the 38 behind them in batches of at most 32 (one a create would be 40).
    assert.ok(Number(transactions) <= 6, `${transactions} transactions for 40 creates`);
    const [first] = answers;
    const replay = await create((tenants[0] as Tenant).key, 0, 'c-0-0');
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, first?.body);
  });

  test("two creates that would pass a project's limit among those that gather: one is created, one meets the limit", async () => {
    const full = await service.tenant();
    for (let n = 0; n < 19; n++) assert.equal((await create(full.key, n, `f-${n}`)).status, 201);
    const answers = await gathered(service, [
      ...Array.from({ length: 10 }, (_, n) => () => create((tenants[1] as Tenant).key, 100 + n, `g-${n}`)),
      () => create(full.key, 19, 'last-a'),
      () => create(full.key, 20, 'last-b'),
    ]);
    for (const answer of answers.slice(0, 10)) assert.equal(answer.status, 201, answer.text);
    const last = answers.slice(10).map((a) => [a.status, a.body.code ?? 'created']);
    assert.deepEqual(last.toSorted(), [
      [201, 'created'],
      [400, 'WEBHOOK_ENDPOINT_LIMIT_REACHED'],
    ]);
    const { rows } = await service.db.query(
      'select webhook_endpoints as n, (select count(*)::int from webhook_endpoints where project_id = $1) as rows from projects where id = $1',
      [full.projectId],
    );
    assert.deepEqual(rows[0], { n: 20, rows: 20 });
  });
});
