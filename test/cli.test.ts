// The CLI against a PostgreSQL given by DATABASE_URL: JSON output, errors, migrations, revocation.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { MIGRATIONS } from '../src/db/migrate.ts';
import { SCOPES } from '../src/keys/scopes.ts';
import { freshDatabase } from './helpers/database.ts';
import { runCli, startProcess } from './helpers/process.ts';

const DATABASE_URL = await freshDatabase();
const env = { DATABASE_URL };

describe('platform CLI', () => {
  test('migrate applies once; concurrent migrations migrate once', async () => {
    const url = await freshDatabase();
    const results = await Promise.all([1, 2, 3, 4].map(() => runCli(['migrate'], { DATABASE_URL: url })));
    assert.deepEqual(
      results.map((r) => r.code),
      [0, 0, 0, 0],
      results.map((r) => r.stderr).join('\n'),
    );
    assert.equal(results.filter((r) => r.stdout.startsWith('applied')).length, 1);
    const client = new pg.Client(url);
    await client.connect();
    const { rows } = await client.query('select name from schema_migrations order by name');
    await client.end();
    assert.deepEqual(
      rows.map((r) => r.name),
      MIGRATIONS.map((m) => m.name),
    );
    assert.equal((await runCli(['migrate'], { DATABASE_URL: url })).stdout.trim(), 'no pending migrations');
  });

  test('projects create --json prints the ProjectMe record and nothing else', async () => {
    const result = await runCli(
      [
        'projects',
        'create',
        '--slug',
        'acme',
        '--name',
        'Acme Inc',
        '--mode',
        'live',
        '--languages',
        'en,fr',
        '--json',
      ],
      env,
    );
    assert.equal(result.code, 0, result.stderr);
    const project = JSON.parse(result.stdout);
    assert.deepEqual(Object.keys(project).sort(), ['id', 'languages', 'mode', 'name', 'slug', 'theme']);
    assert.equal(project.slug, 'acme');
    assert.equal(project.name, 'Acme Inc');
    assert.equal(project.mode, 'live');
    assert.deepEqual(project.languages, ['en', 'fr']);
    assert.match(project.id, /^[0-9a-f-]{36}$/);
  });

  test('keys create --json prints {id, key, projectId, scopes}; --scopes all grants every scope', async () => {
    const project = JSON.parse(
      (await runCli(['projects', 'create', '--slug', 'beta', '--name', 'Beta', '--json'], env)).stdout,
    );
    const result = await runCli(['keys', 'create', '--project', 'beta', '--scopes', 'all', '--json'], env);
    assert.equal(result.code, 0, result.stderr);
    const key = JSON.parse(result.stdout);
    assert.deepEqual(Object.keys(key).sort(), ['id', 'key', 'projectId', 'scopes']);
    assert.equal(key.projectId, project.id);
    assert.deepEqual(key.scopes, [...SCOPES]);
    assert.match(key.key, /^pk_test_[0-9A-Za-z]{32}$/);
    const live = JSON.parse(
      (await runCli(['keys', 'create', '--project', 'acme', '--scopes', 'usage:read', '--json'], env)).stdout,
    );
    assert.match(live.key, /^pk_live_/);
    assert.deepEqual(live.scopes, ['usage:read']);
  });

  test('clear errors: usage (exit 2) and refusals (exit 1)', async () => {
    const cases: [string[], number, RegExp][] = [
      [['keys', 'create', '--project', 'beta', '--scopes', 'root:all'], 2, /unknown scope root:all/],
      [['projects', 'create', '--slug', 'beta', '--name', 'Again'], 1, /already exists/],
      [['projects', 'create', '--slug', 'Bad Slug', '--name', 'X'], 1, /slug must be/],
      [['projects', 'create', '--slug', 'x1', '--name', 'X', '--mode', 'prod'], 1, /mode must be/],
      [['keys', 'create', '--project', 'nobody', '--scopes', 'all'], 1, /no project with slug "nobody"/],
      [['keys', 'revoke', 'not-a-uuid'], 2, /needs the key id/],
      [['keys', 'revoke', '00000000-0000-4000-8000-000000000000'], 1, /no key/],
      [['frobnicate'], 2, /unknown command/],
    ];
    for (const [args, code, message] of cases) {
      const result = await runCli(args, env);
      assert.equal(result.code, code, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
      assert.ok(!/\n\s+at /.test(result.stderr), 'no stack trace');
    }
  });

  test('a revocation reaches a running service within 5 seconds', async () => {
    const service = await startProcess('serve', env);
    const key = JSON.parse(
      (await runCli(['keys', 'create', '--project', 'beta', '--scopes', 'all', '--json'], env)).stdout,
    );
    const me = () => fetch(`${service.baseUrl}/core/v1/projects/me`, { headers: { 'x-api-key': key.key } });
    assert.equal((await me()).status, 200); // now cached in the service
    assert.equal((await runCli(['keys', 'revoke', key.id], env)).code, 0);
    const revokedAt = Date.now();
    let last: Response;
    do {
      await new Promise((resolve) => setTimeout(resolve, 250));
      last = await me();
    } while (last.status === 200 && Date.now() - revokedAt < 6000);
    const body = (await last.json()) as { code: string };
    assert.equal(last.status, 401);
    assert.equal(body.code, 'API_KEY_REVOKED');
    assert.ok(Date.now() - revokedAt <= 5500, 'refused within the 5 s bound (plus one poll)');
    assert.equal(await service.stop(), 0);
  });

  test('limits set: the override appears in the usage report', async () => {
    const key = JSON.parse(
      (await runCli(['keys', 'create', '--project', 'beta', '--scopes', 'usage:read', '--json'], env)).stdout,
    );
    const set = await runCli(
      [
        'limits',
        'set',
        '--project',
        'beta',
        '--capability',
        'core',
        '--metric',
        'events_published',
        '--daily-limit',
        '7',
      ],
      env,
    );
    assert.equal(set.code, 0, set.stderr);
    for (const [capability, limit] of [
      ['Core', '1'], // not a lowercase name
      ['core', '-1'], // not a whole number
    ] as const) {
      const args = [
        'limits',
        'set',
        '--project',
        'beta',
        '--capability',
        capability,
        '--metric',
        'x',
        '--daily-limit',
        limit,
      ];
      assert.equal((await runCli(args, env)).code, 2, args.join(' '));
    }
    const service = await startProcess('serve', env);
    const usage = await (
      await fetch(`${service.baseUrl}/core/v1/usage`, { headers: { 'x-api-key': key.key } })
    ).json();
    assert.deepEqual(
      (usage as { limits: unknown[] }).limits.find((l: any) => l.metric === 'events_published'),
      { capability: 'core', metric: 'events_published', dailyLimit: 7 },
    );
    assert.equal(await service.stop(), 0);
  });

  test('usage counts buffered in memory are flushed on a graceful shutdown', async () => {
    const key = JSON.parse(
      (await runCli(['keys', 'create', '--project', 'acme', '--scopes', 'all', '--json'], env)).stdout,
    );
    const service = await startProcess('serve', env);
    for (let i = 0; i < 25; i++)
      await fetch(`${service.baseUrl}/core/v1/projects/me`, { headers: { 'x-api-key': key.key } });
    assert.equal(await service.stop('SIGTERM'), 0); // at once: most of the 25 are still in the buffer
    const client = new pg.Client(DATABASE_URL);
    await client.connect();
    const { rows } = await client.query(
      `select coalesce(sum(count), 0)::int as n from usage_daily where project_id = $1 and metric = 'api_requests'`,
      [key.projectId],
    );
    await client.end();
    assert.equal(rows[0].n, 25);
  });
});
