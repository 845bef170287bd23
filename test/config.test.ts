import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';
import { DEFAULT_POOL_SIZE, openDatabase } from '../src/db/database.ts';
import { createDatabase } from './helpers/database.ts';

describe('configuration', () => {
  test('PLATFORM_DATABASE_POOL_SIZE: 10 by default, the most connections a process holds; bad values refused', async () => {
    assert.equal(loadConfig({}).databasePoolSize, DEFAULT_POOL_SIZE);
    assert.equal(DEFAULT_POOL_SIZE, 10);
    assert.equal(loadConfig({ PLATFORM_DATABASE_POOL_SIZE: '3' }).databasePoolSize, 3);
    for (const bad of ['0', '-1', '2.5', 'ten', '1001'])
      assert.throws(() => loadConfig({ PLATFORM_DATABASE_POOL_SIZE: bad }), ConfigError, bad);

    // Held to it: with 3 connections, three sleeping queries hold the pool and a fourth waits for one.
    const { url, drop } = await createDatabase();
    const db = openDatabase(url, { max: loadConfig({ PLATFORM_DATABASE_POOL_SIZE: '3' }).databasePoolSize });
    try {
      const sleeping = Array.from({ length: 3 }, () => db.query('select pg_sleep(0.3)'));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const waited = performance.now();
      await db.query('select 1');
      assert.ok(performance.now() - waited > 100, 'the fourth query waited for a connection');
      assert.equal(db.pool.totalCount, 3);
      await Promise.all(sleeping);
    } finally {
      await db.close();
      await drop();
    }
  });
});
