import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openDatabase } from '../src/db/database.ts';
import { loadConfig } from '../src/lib/config.ts';
import { DEFAULT_POOL_SIZE } from '../src/lib/defaults.ts';
import { ConfigError } from '../src/lib/errors.ts';
import { createDatabase } from './helpers/database.ts';

describe('configuration', () => {
  test('PLATFORM_DATABASE_POOL_SIZE: 10 by default, the most connections a process holds; bad values refused', async () => {
    assert.equal(loadConfig({}).databasePoolSize, DEFAULT_POOL_SIZE);
    assert.equal(DEFAULT_POOL_SIZE, 10);
    assert.equal(loadConfig({ PLATFORM_DATABASE_POOL_SIZE: '3' }).databasePoolSize, 3);
    for (const bad of ['0', '-1', '2.5', 'ten', '1001'])
      assert.throws(() => loadConfig({ PLATFORM_DATABASE_POOL_SIZE: bad }), ConfigError, bad);

    // Held to it: with 3 connections held, a fourth query waits for one, and runs once one is given back.
    const { url, drop } = await createDatabase();
    const db = openDatabase(url, { max: loadConfig({ PLATFORM_DATABASE_POOL_SIZE: '3' }).databasePoolSize });
    try {
      const held = await Promise.all(Array.from({ length: 3 }, () => db.pool.connect()));
      const fourth = db.query('select 1 as one');
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual([db.pool.totalCount, db.pool.waitingCount], [3, 1], 'the fourth query waits');
      held[0]?.release();
      assert.equal((await fourth).rows[0]?.one, 1);
      for (const client of held.slice(1)) client.release();
    } finally {
      await db.close();
      await drop();
    }
  });
});
