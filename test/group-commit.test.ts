// Statements committed together (src/db/group-commit.ts): offered while others are being written, they go
// in one transaction; a batch that fails commits nothing, and each of its statements meets its own outcome
// alone. Publishes go this way (their sole statement only inserts).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { openDatabase } from '../src/db/database.ts';
import { startService } from './helpers/app.ts';
import { freshDatabase } from './helpers/database.ts';
import { eventually } from './helpers/receiver.ts';

const db = openDatabase(await freshDatabase());
after(() => db.close());
await db.query('create table offered (id int primary key, note text)');

const insert = (id: number, note = '') => ({
  name: 'offered-insert',
  text: 'insert into offered (id, note) values ($1, $2)',
  values: [id, note],
});
/** How many transactions wrote the table's rows (each transaction that inserts has an id of its own). */
const transactions = async () =>
  Number((await db.query('select count(distinct xmin::text) as n from offered')).rows[0]?.n);
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
  assert.equal((await publish(0, 'first')).status, 202); // the first of its kind foresees the rest

  /**
   * Publishes sent at once while the records' table is locked against writes: the first two writes wait
   * for the lock and the rest gather behind them, as they would behind a busy database.
   */
  const gathered = async (sends: [number, string][]) => {
    const blocker = await service.db.pool.connect();
    await blocker.query('begin');
    await blocker.query('lock table idempotency_keys in share mode');
    const sent = Promise.all(sends.map(([n, key]) => publish(n, key)));
    const waiting = async () =>
      (
        await service.db.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity
            where wait_event_type = 'Lock' and datname = current_database()`,
        )
      ).rows[0]?.n === 2;
    try {
      await eventually(waiting, 20_000, 'two writes waiting for the lock');
      await new Promise((resolve) => setTimeout(resolve, 500)); // the other requests reach their statements
    } finally {
      await blocker.query('commit');
      blocker.release();
    }
    return sent;
  };
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
    const answers = await gathered(Array.from({ length: 50 }, (_, n) => [n, `k-${n}`]));
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
    const answers = await gathered([
      ...Array.from({ length: 20 }, (_, n): [number, string] => [n, `t-${n}`]),
      [99, 'twice'],
      [99, 'twice'],
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
