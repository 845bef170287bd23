import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { executable, inline, literal } from '../src/db/inline.ts';
import { freshDatabase } from './helpers/database.ts';

// The idempotency hot path sends an operation's first statement with its values written in as literals.
// Every kind of value our statements bind must reach PostgreSQL exactly as a bound parameter does.
const url = await freshDatabase();

describe('statements with their values inlined', () => {
  const client = new pg.Client(url);
  before(async () => {
    await client.connect();
    await client.query(
      `create table t (s text, a text[], b bytea, n integer, at timestamptz, j jsonb, ok boolean)`,
    );
  });
  after(() => client.end());

  const odd = [
    `it's "quoted" \\ back\\slashed`,
    'emoji 🦄, combining é, RTL \u202e, zero-width \u200b, line\nbreak',
    '$1 looks like a parameter',
    '',
  ];

  test('strings, arrays, bytes, numbers, times, JSON, booleans and nulls round-trip as parameters do', async () => {
    const rows: unknown[][] = [
      [
        odd[0],
        odd,
        Buffer.from([0, 1, 0x5c, 0x27, 255]),
        20,
        new Date('2026-03-10T23:00:00.123Z'),
        { k: odd[1] },
        true,
      ],
      [odd[1], [], Buffer.alloc(0), -7, new Date(0), { list: [1, 'two', null] }, false],
      [null, null, null, null, null, null, null],
    ];
    const insert = 'insert into t (s, a, b, n, at, j, ok) values ($1, $2, $3, $4, $5, $6, $7)';
    for (const values of rows) {
      await client.query(insert, values);
      await client.query(inline({ text: insert, values }));
    }
    const { rows: stored } = await client.query('select * from t');
    assert.equal(stored.length, rows.length * 2);
    for (let i = 0; i < rows.length; i++) assert.deepEqual(stored[2 * i + 1], stored[2 * i]);
    assert.deepEqual(stored[0]?.a, odd);
    assert.deepEqual(stored[0]?.b, Buffer.from([0, 1, 0x5c, 0x27, 255]));
  });

  test("text is quoted exactly as pg's escapeLiteral quotes it", () => {
    for (const text of [...odd, "''", '\\\\', "\\'", 'x'.repeat(1000)]) {
      assert.equal(literal(text), pg.escapeLiteral(text), text);
    }
  });

  test('a named statement runs as EXECUTE of a statement prepared once per connection', async () => {
    const insert = {
      name: 'inline-test-insert',
      text: 'insert into t (s, a, b, n, at, j, ok) values ($1, $2, $3, $4, $5, $6, $7) returning *',
    };
    const values = [odd[1], odd, Buffer.from([0x5c, 0x27]), 3, new Date(1), { k: odd[0] }, true];
    const bound = await client.query(insert.text, values);
    const first = await executable(client, { ...insert, values });
    assert.match(first, /^execute "inline:inline-test-insert"\(/);
    const again = await executable(client, { ...insert, values: [null, null, null, null, null, null, null] });
    const executed = await client.query(first);
    assert.deepEqual(executed.rows, bound.rows);
    assert.equal((await client.query(again)).rows[0]?.s, null);
    const { rows } = await client.query(
      `select count(*)::int as n from pg_prepared_statements where name = 'inline:inline-test-insert'`,
    );
    assert.equal(rows[0]?.n, 1);

    // Another connection prepares its own.
    const other = new pg.Client(url);
    await other.connect();
    try {
      assert.equal((await other.query(await executable(other, { ...insert, values }))).rows.length, 1);
    } finally {
      await other.end();
    }
  });

  test('one name for two different statements is refused, as pg refuses it for its own', async () => {
    await executable(client, { name: 'inline-test-one', text: 'select $1::int as n', values: [1] });
    await assert.rejects(
      executable(client, { name: 'inline-test-one', text: 'select $1::text as n', values: ['1'] }),
      /used for two different statements/,
    );
  });

  test('a parameter written twice, and $10 after $1', async () => {
    const values = Array.from({ length: 10 }, (_, i) => `v${i + 1}`);
    const text = `select $1::text as a, $10::text as b, $1::text as c, ${values.map((_, i) => `$${i + 1}::text`).join(' || ')} as d`;
    const [bound, inlined] = [await client.query(text, values), await client.query(inline({ text, values }))];
    assert.deepEqual(inlined.rows, bound.rows);
    assert.equal(inlined.rows[0]?.b, 'v10');
  });
});
