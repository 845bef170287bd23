// The embedded PostgreSQL as a user meets it: `platform start` on a fresh data directory, CLI commands
// beside the running service, the second-service guard, a clean stop, and commands while stopped.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { runCli, startProcess } from './helpers/process.ts';

const dataDir = mkdtempSync(path.join(tmpdir(), 'pce-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));
const env = { PLATFORM_DATA_DIR: dataDir };
const postmasterPid = path.join(dataDir, 'pg', 'postmaster.pid');

const get = (baseUrl: string, route: string, key: string) =>
  fetch(`${baseUrl}${route}`, { headers: { 'x-api-key': key } });

describe('embedded PostgreSQL', () => {
  let firstKey = '';

  test('platform start on an empty directory: initialises, creates project dev, prints one all-scope key once', async () => {
    const service = await startProcess('start', env);
    const keys = service.output().match(/pk_test_[0-9A-Za-z]{32}/g) ?? [];
    assert.equal(new Set(keys).size, 1, service.output());
    firstKey = keys[0] ?? '';
    const health = await get(service.baseUrl, '/api/health', firstKey);
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as any).db, 'up');
    const me = (await (await get(service.baseUrl, '/core/v1/projects/me', firstKey)).json()) as any;
    assert.equal(me.slug, 'dev');

    // a CLI command while the service runs uses the same database
    assert.equal((await runCli(['projects', 'create', '--slug', 'shop', '--name', 'Shop'], env)).code, 0);
    const created = await runCli(
      ['keys', 'create', '--project', 'shop', '--scopes', 'projects:read', '--json'],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const shopKey = JSON.parse(created.stdout).key;
    assert.equal(
      ((await (await get(service.baseUrl, '/core/v1/projects/me', shopKey)).json()) as any).slug,
      'shop',
    );

    // a second service on the same directory fails at once, clearly, and harms nothing
    const second = await runCli(['start'], { ...env, PORT: '0' });
    assert.equal(second.code, 1);
    assert.match(second.stderr, /already used by a running service/);
    assert.equal((await get(service.baseUrl, '/api/health', firstKey)).status, 200);

    // SIGTERM: a clean stop, PostgreSQL included
    assert.equal(await service.stop('SIGTERM'), 0);
    assert.ok(!existsSync(postmasterPid), 'the embedded PostgreSQL stopped with the service');
  });

  test('a command while the service is stopped starts the database for its own duration', async () => {
    const result = await runCli(['projects', 'create', '--slug', 'later', '--name', 'Later', '--json'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).slug, 'later');
    assert.ok(!existsSync(postmasterPid), 'stopped again after the command');
  });

  test('a restart keeps everything and prints no new key', async () => {
    const service = await startProcess('start', env);
    assert.ok(!/pk_test_/.test(service.output()), 'no key printed on a database that has projects');
    assert.equal((await get(service.baseUrl, '/core/v1/projects/me', firstKey)).status, 200);
    assert.equal(await service.stop('SIGTERM'), 0);
  });

  test('a service killed with SIGKILL: the next one adopts the running database', async () => {
    const killed = await startProcess('start', env);
    await killed.stop('SIGKILL');
    const service = await startProcess('start', env);
    assert.equal((await get(service.baseUrl, '/api/health', firstKey)).status, 200);
    assert.equal(await service.stop('SIGTERM'), 0);
    assert.ok(!existsSync(postmasterPid));
  });
});
