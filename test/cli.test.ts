// The CLI against a PostgreSQL given by DATABASE_URL: JSON output, errors, migrations, revocation.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { MIGRATIONS } from '../src/db/migrate.ts';
import { SCOPES } from '../src/keys/scopes.ts';
import { freshDatabase } from './helpers/database.ts';
import { childEnv, runCli, startProcess } from './helpers/process.ts';

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

  test('a .env in the working directory is read; the environment wins over it (.env.example lists every setting)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'platform-env-'));
    const url = await freshDatabase();
    writeFileSync(path.join(dir, '.env'), `DATABASE_URL=${url}\nPLATFORM_LOG_LEVEL=silent\n`);
    const bin = new URL('../bin/platform.js', import.meta.url).pathname;
    const migrate = (extra: Record<string, string | undefined>) =>
      promisify(execFile)(process.execPath, [bin, 'migrate'], { cwd: dir, env: childEnv(extra) });
    assert.match((await migrate({ PLATFORM_LOG_LEVEL: undefined })).stdout, /^applied/);
    assert.equal((await migrate({ PLATFORM_LOG_LEVEL: undefined })).stdout.trim(), 'no pending migrations');
    // Set in the environment, it wins: another database, migrated now.
    const other = await freshDatabase();
    assert.match((await migrate({ PLATFORM_LOG_LEVEL: undefined, DATABASE_URL: other })).stdout, /^applied/);
    rmSync(dir, { recursive: true, force: true });
    const example = readFileSync(new URL('../.env.example', import.meta.url), 'utf8');
    const documented = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
    const names = (text: string, pattern: RegExp) =>
      [...new Set([...text.matchAll(pattern)].map((m) => m[1]))].sort();
    assert.deepEqual(
      names(example, /^# ([A-Z][A-Z_]+)=/gm),
      names(documented.split('## The CLI')[0] ?? '', /`((?:PLATFORM_|DATABASE_|REDIS_|PORT|HOST)[A-Z_]*)`/g),
    );
  });

  test('projects create --json prints the ProjectMe record and nothing else; it takes the theme as the API does', async () => {
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
        '--theme-primary',
        '#112233',
        '--logo-url',
        'https://cdn.example.com/acme.png',
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
    assert.equal(project.theme.primary, '#112233');
    assert.equal(project.theme.logoUrl, 'https://cdn.example.com/acme.png');
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
      [['keys', 'create', '--project', 'beta', '--scopes', 'root:all'], 1, /unknown scope root:all/],
      [['keys', 'create', '--project', 'beta'], 2, /keys create needs --scopes/],
      [['projects', 'create', '--slug', 'beta', '--name', 'Again'], 1, /already exists/],
      [['projects', 'create', '--slug', 'Bad Slug', '--name', 'X'], 1, /slug must be/],
      [['projects', 'create', '--slug', 'x1', '--name', 'X', '--mode', 'prod'], 1, /mode must be/],
      [['keys', 'create', '--project', 'nobody', '--scopes', 'all'], 1, /no project with slug "nobody"/],
      [['keys', 'revoke'], 2, /keys revoke needs the key/],
      [['keys', 'revoke', 'pk_test_nothing'], 1, /key not found/],
      [['keys', 'revoke', '00000000-0000-4000-8000-000000000000'], 1, /key not found/],
      [
        [
          'limits',
          'set',
          '--project',
          'beta',
          '--capability',
          'core',
          '--metric',
          'naps',
          '--daily-limit',
          '3',
        ],
        1,
        /no capability counts core\/naps; the metrics are core\/api_requests/,
      ],
      [['frobnicate'], 2, /unknown command/],
      // A refused value is said by its flag.
      [
        ['projects', 'update', '--slug', 'beta', '--theme-primary', 'red'],
        1,
        /^platform: --theme-primary: primary is a colour written #RRGGBB\n$/,
      ],
    ];
    for (const [args, code, message] of cases) {
      const result = await runCli(args, env);
      assert.equal(result.code, code, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
      assert.ok(!/\n\s+at /.test(result.stderr), 'no stack trace');
    }
  });

  test('--help and --version need no database; openapi prints the document committed as openapi.json', async () => {
    // No database at all: neither answer may load the service or reach PostgreSQL.
    const nowhere = { DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none' };
    const help = await runCli(['--help'], nowhere);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^usage: platform <command>/);
    // Every command, and every group, answers --help with its own usage, and no database.
    const commands = [...help.stdout.matchAll(/^ {2}([a-z][a-z-]*)(?: ([a-z]+)(?= ))?/gm)].map((m) =>
      [m[1], m[2]].filter((word): word is string => word !== undefined),
    );
    assert.ok(commands.length >= 20, `${commands.length} commands`);
    const asked = [...commands, ['keys'], ['capabilities']].flatMap((words) =>
      ['--help', '-h'].map((flag) => [...words, flag]),
    );
    // Four at a time: each is a process of its own.
    for (let i = 0; i < asked.length; i += 4) {
      await Promise.all(
        asked.slice(i, i + 4).map(async (args) => {
          const own = await runCli(args, nowhere);
          const words = args.slice(0, -1).join(' ');
          assert.equal(own.code, 0, `${args.join(' ')}: ${own.stderr}`);
          assert.match(own.stdout, new RegExp(`^usage:\\n {2}platform ${words}`), own.stdout);
        }),
      );
    }
    const version = await runCli(['--version'], nowhere);
    const { version: packaged } = JSON.parse(
      readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
    );
    assert.equal(version.stdout.trim(), packaged);
    const printed = await runCli(['openapi'], env);
    assert.equal(printed.code, 0, printed.stderr);
    const committed = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8'));
    assert.deepEqual(JSON.parse(printed.stdout), committed);
  });

  test('serve and worker on an empty database say to migrate, without a stack trace', async () => {
    const empty = { DATABASE_URL: await freshDatabase() };
    for (const command of ['serve', 'worker']) {
      const result = await runCli([command], empty);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /the database has no tables yet: run `platform migrate` first/);
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
    for (const [capability, limit, code] of [
      ['Core', '1', 1], // no capability is called that: refused, naming the metrics there are
      ['core', '-1', 2], // not a whole number: wrong usage
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
      assert.equal((await runCli(args, env)).code, code, args.join(' '));
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

  test('management: operator keys, projects list and update, keys list, revoke by prefix or key, limits get; --json everywhere', async () => {
    const json = async (args: string[]) => {
      const result = await runCli([...args, '--json'], env);
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      return JSON.parse(result.stdout);
    };
    assert.equal((await runCli(['--version'], env)).stdout.trim(), '0.1.0');
    const started = new Date();
    const operator = await json(['operator-keys', 'create', '--scopes', 'all', '--name', 'ops']);
    assert.deepEqual(Object.keys(operator).sort(), ['id', 'key', 'name', 'scopes']);
    assert.match(operator.key, /^pk_op_[0-9A-Za-z]{32}$/);
    assert.deepEqual(operator.scopes, [
      'projects:manage',
      'keys:manage',
      'limits:manage',
      'audit:read',
      'capabilities:manage',
    ]);
    assert.equal(operator.name, 'ops');

    const updated = await json([
      'projects',
      'update',
      '--slug',
      'beta',
      '--theme-primary',
      '#000000',
      '--languages',
      'fr,en-us',
      '--logo-url',
      'https://cdn.example.com/b.png',
      '--retention-days',
      '14',
    ]);
    assert.equal(updated.theme.primary, '#000000');
    assert.deepEqual(updated.languages, ['fr', 'en-US']);
    assert.equal(updated.retentionDays, 14);
    const listed = await json(['projects', 'list', '--slug-prefix', 'be']);
    assert.deepEqual(
      listed.data.map((p: { slug: string }) => p.slug),
      ['beta'],
    );

    const key = await json([
      'keys',
      'create',
      '--project',
      'beta',
      '--scopes',
      'usage:read',
      '--name',
      'reports',
    ]);
    const keys = await json(['keys', 'list', '--project', 'beta']);
    const shown = keys.data.find((k: { id: string }) => k.id === key.id);
    assert.equal(shown.name, 'reports');
    const text = (await runCli(['keys', 'list', '--project', 'beta'], env)).stdout;
    assert.match(text.split('\n').find((line) => line.startsWith(key.id)) ?? '', /\treports\t/);
    assert.equal(shown.prefix, key.key.slice(0, 12));
    assert.ok(!JSON.stringify(keys).includes(key.key), 'never the key');

    const byPrefix = await runCli(['keys', 'revoke', shown.prefix], env);
    assert.equal(byPrefix.code, 0, byPrefix.stderr);
    assert.match(byPrefix.stdout, /^revoked key /);
    const again = await runCli(['keys', 'revoke', key.key], env);
    assert.match(again.stdout, /was already revoked, at /);
    const againJson = await json(['keys', 'revoke', key.id]);
    assert.equal(againJson.revokedNow, false);
    assert.ok(againJson.revokedAt);

    const limits = await json(['limits', 'get', '--project', 'beta']);
    assert.deepEqual(
      limits.data.find((l: { metric: string }) => l.metric === 'events_published'),
      { capability: 'core', metric: 'events_published', dailyLimit: 7, source: 'project' },
    );
    const set = await json([
      'limits',
      'set',
      '--project',
      'beta',
      '--capability',
      'core',
      '--metric',
      'api_requests',
      '--daily-limit',
      '9',
    ]);
    assert.deepEqual(set, { capability: 'core', metric: 'api_requests', dailyLimit: 9, source: 'project' });
    const cleared = await json([
      'limits',
      'clear',
      '--project',
      'beta',
      '--capability',
      'core',
      '--metric',
      'api_requests',
    ]);
    assert.equal(cleared.source, 'default');

    // The CLI's changes are audited as the CLI's.
    const client = new pg.Client(DATABASE_URL);
    await client.connect();
    const { rows } = await client.query(
      `select action, actor_type, fields from audit_log
        where action in ('project.updated', 'key.revoked', 'limit.cleared') and at >= $1 order by at`,
      [started],
    );
    await client.end();
    assert.deepEqual(
      rows.map((r) => [r.action, r.actor_type]),
      [
        ['project.updated', 'cli'],
        ['key.revoked', 'cli'],
        ['limit.cleared', 'cli'],
      ],
    );
  });
});
