// A process killed while it holds an idempotency key: the key is released (its transaction rolls back
// with the connection), the retry performs the operation once, and nothing of the killed attempt remains.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { spawnNode } from '../support/process.ts';
import { EFFECTS_TABLE, effectsRoute } from './fixtures/effects-route.ts';
import { startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { freshDatabase } from './helpers/database.ts';
import { childEnv } from './helpers/process.ts';

const databaseUrl = await freshDatabase();
const survivor = await startService({ databaseUrl, setup: effectsRoute });
await survivor.db.query(EFFECTS_TABLE);
const tenant = await survivor.tenant();

test('a killed process’s claim is released and the retry performs exactly once', async () => {
  const child = spawnNode(
    new URL('./fixtures/effects-service.ts', import.meta.url).pathname,
    [],
    childEnv({ DATABASE_URL: databaseUrl, PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY }),
  );
  after(() => child.stop('SIGKILL'));
  const url = await child.waitFor(/listening on (\S+)/);

  const request = { note: 'crash', sleepMs: 3000 };
  const headers = {
    'x-api-key': tenant.key,
    'idempotency-key': 'crash-1',
    'content-type': 'application/json',
  };
  const doomed = fetch(`${url}/test/effects`, {
    method: 'POST',
    headers,
    body: JSON.stringify(request),
  }).catch(() => 'connection lost');
  // wait until the child's transaction holds the key and has written its effect
  for (let i = 0; i < 100; i++) {
    const { rows } = await survivor.db.query(
      `select count(*) as n from pg_locks where locktype = 'advisory'`,
    );
    if (Number(rows[0]?.n) > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const busy = await survivor.request('POST', '/test/effects', {
    key: tenant.key,
    body: request,
    headers: { 'idempotency-key': 'crash-1' },
  });
  assert.equal(busy.status, 409, 'the key is held while the child runs');

  await child.stop('SIGKILL');
  assert.equal(await doomed, 'connection lost');

  // within the 60 s lease (in practice as soon as PostgreSQL sees the connection gone) the key is free
  let retry = busy;
  const deadline = Date.now() + 65_000;
  while (retry.status === 409 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    retry = await survivor.request('POST', '/test/effects', {
      key: tenant.key,
      body: request,
      headers: { 'idempotency-key': 'crash-1' },
    });
  }
  assert.equal(retry.status, 201, retry.text);
  assert.equal(retry.headers.get('idempotent-replayed'), null, 'performed by the survivor, not replayed');
  const { rows } = await survivor.db.query(`select count(*) as n from test_effects where note = 'crash'`);
  assert.equal(Number(rows[0]?.n), 1, 'the killed attempt left no effect');
});
