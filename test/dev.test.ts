// `platform dev`: readable logs, a key shown on every start, and a receiver that prints each event of
// project dev with its signature checked; the key and the endpoint kept across restarts; never in prod.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { freshDatabase } from './helpers/database.ts';
import { runCli, startProcess } from './helpers/process.ts';

const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-dev-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));
const env = { DATABASE_URL: await freshDatabase(), PLATFORM_DATA_DIR: dataDir };

async function publish(baseUrl: string, key: string, amount: number) {
  const response = await fetch(`${baseUrl}/core/v1/events`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': `dev-${amount}` },
    body: JSON.stringify({ type: 'pay.payment.succeeded', data: { amount } }),
  });
  assert.equal(response.status, 202, await response.text());
}

describe('platform dev', () => {
  test('the first start shows a key; an event published with it is printed by the receiver, verified', async () => {
    const dev = await startProcess('dev', env);
    const key = await dev.waitFor(/key\s+(pk_test_\w+)/);
    const endpoint = await dev.waitFor(/endpoint ([0-9a-f-]{36}):/);
    assert.doesNotMatch(dev.output(), /^\{"level"/m, 'logs are lines for people, not JSON');
    assert.match(dev.output(), /request: GET \/core\/v1\/projects\/me → 200/);
    await publish(dev.baseUrl, key, 4200);
    await dev.waitFor(/← pay\.payment\.succeeded {2}\S+ {2}signature verified\n\s+\{"amount":4200\}/, 15_000);
    assert.equal(statSync(path.join(dataDir, 'dev.json')).mode & 0o777, 0o600);
    await dev.stop();

    // Started again (on another receiver port): the same key, the same endpoint, moved to the new port.
    const again = await startProcess('dev', env);
    assert.equal(await again.waitFor(/key\s+(pk_test_\w+)/), key);
    assert.equal(await again.waitFor(/endpoint ([0-9a-f-]{36}):/), endpoint);
    await publish(again.baseUrl, key, 4300);
    await again.waitFor(/signature verified\n\s+\{"amount":4300\}/, 15_000);
    await again.stop();
  });

  test('a revoked key is replaced by a new one of project dev', async () => {
    const first = await startProcess('dev', env);
    const key = await first.waitFor(/key\s+(pk_test_\w+)/);
    await first.stop();
    const revoked = await runCli(['keys', 'revoke', key], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    const dev = await startProcess('dev', env);
    const fresh = await dev.waitFor(/key\s+(pk_test_\w+)/);
    assert.notEqual(fresh, key);
    await publish(dev.baseUrl, fresh, 4400);
    await dev.waitFor(/signature verified\n\s+\{"amount":4400\}/, 15_000);
    await dev.stop();
  });

  test('refused in production', async () => {
    const result = await runCli(['dev'], { ...env, PLATFORM_ENV: 'prod' });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /platform dev is refused when PLATFORM_ENV=prod/);
  });
});
