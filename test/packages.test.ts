// The packages as users get them: `npm pack` of each, installed from the tarballs into new projects
// outside the repository (ESM and CommonJS), type-checked with tsc --strict, and run against the service
// on the machine's own Node (20 here) when it has one, so the built JavaScript is held to `engines`.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { startService } from './helpers/app.ts';

const run = promisify(execFile);
const root = new URL('../', import.meta.url).pathname;
const fixtures = new URL('fixtures/packages/', import.meta.url).pathname;
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
const work = mkdtempSync(path.join(tmpdir(), 'platform-packages-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** The machine's own node (not the pinned one in node_modules), to run the packages as a user would. */
async function userNode(): Promise<string> {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir.includes('node_modules')) continue;
    const candidate = path.join(dir, 'node');
    const found = await run(candidate, ['--version']).then(
      () => candidate,
      () => undefined,
    );
    if (found) return found;
  }
  return process.execPath;
}

const service = await startService({ env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1' }, worker: true });
const tenant = await service.tenant();
const product = await service.capability('printer', {
  manifest: {
    description: 'Printing',
    scopes: [],
    metrics: [{ name: 'pages', description: 'Pages printed', defaultDailyLimit: 100 }],
    eventTypes: [],
    providers: [],
    erasure: null,
    gateway: null,
  },
});
const env = {
  ...process.env,
  PLATFORM_API_KEY: tenant.key,
  PLATFORM_CAPABILITY_KEY: product.key,
  PLATFORM_URL: service.baseUrl,
};

/** A new project outside the repository with the tarballs installed by npm. */
async function project(name: string, type: 'module' | 'commonjs', tarballs: string[]) {
  const dir = path.join(work, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, type }));
  const installed = await run('npm', ['install', '--no-audit', '--no-fund', '--offline', ...tarballs], {
    cwd: dir,
  });
  // Nothing runs on install: the packages ship built, with no lifecycle script for npm to warn about.
  assert.doesNotMatch(installed.stderr, /install-scripts|prepare/, installed.stderr);
  const compilerOptions = {
    strict: true,
    module: 'nodenext',
    target: 'es2022',
    outDir: 'out',
    skipLibCheck: false,
    // Node's types from the repository, so the test needs no registry.
    typeRoots: [path.join(root, 'node_modules/@types')],
    types: ['node'],
  };
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions, include: ['*.ts', '*.cts'] }),
  );
  return dir;
}

describe('the packages, packed and installed', () => {
  let tarballs: string[] = [];

  test('npm pack makes a tarball of each: built JavaScript, types, ESM and CommonJS, a README', async () => {
    const { stdout } = await run(
      'npm',
      [
        'pack',
        '--json',
        '--pack-destination',
        work,
        ...['-w', 'packages/client', '-w', 'packages/webhooks', '-w', 'packages/capability'],
      ],
      { cwd: root },
    );
    const packed = JSON.parse(stdout) as { filename: string; files: { path: string }[]; size: number }[];
    assert.deepEqual(
      packed.map((p) => p.filename),
      [
        'platform-core-client-0.1.0.tgz',
        'platform-core-webhooks-0.1.0.tgz',
        'platform-core-capability-0.1.0.tgz',
      ],
    );
    for (const { files } of packed) {
      const names = files.map((f) => f.path);
      for (const file of [
        'README.md',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/cjs/index.js',
        'dist/cjs/index.d.ts',
      ])
        assert.ok(names.includes(file), file);
      assert.ok(
        !names.some((name) => name.startsWith('src/') || name.startsWith('test/')),
        'sources stay home',
      );
    }
    tarballs = packed.map((p) => path.join(work, p.filename));
  });

  test('an ESM project: tsc --strict, then the program runs against the service on the machine’s Node', async () => {
    assert.equal(tarballs.length, 3, 'packed first');
    const dir = await project('esm-app', 'module', tarballs);
    assert.deepEqual(readdirSync(path.join(dir, 'node_modules/@platform-core')).sort(), [
      'capability',
      'client',
      'webhooks',
    ]);
    copyFileSync(path.join(fixtures, 'app.ts'), path.join(dir, 'app.ts'));
    await run(process.execPath, [tsc, '-p', dir]);
    const node = await userNode();
    const { stdout: version } = await run(node, ['--version']);
    const { stdout } = await run(node, [path.join(dir, 'out/app.js')], { env, timeout: 30_000 });
    const lines = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.equal(lines.find((l) => l.published)?.deliveries, 1, stdout);
    assert.deepEqual(
      lines.find((l) => l.refused),
      { refused: 'NOT_FOUND', status: 404 },
    );
    assert.deepEqual(
      lines.find((l) => l.received),
      { received: 'pay.payment.succeeded', amount: 4200 },
    );
    console.log(`ran on node ${version.trim()}`);
  });

  test('a CommonJS project (npm’s default): tsc --strict, then require finds both packages', async () => {
    const dir = await project('cjs-app', 'commonjs', tarballs);
    copyFileSync(path.join(fixtures, 'app.cts'), path.join(dir, 'app.cts'));
    await run(process.execPath, [tsc, '-p', dir]);
    const { stdout } = await run(await userNode(), [path.join(dir, 'out/app.cjs')], { env, timeout: 30_000 });
    assert.deepEqual(JSON.parse(stdout), { project: tenant.slug, refused: true });
  });

  test('a product’s service in a CommonJS project: the capability SDK verifies a key and records usage', async () => {
    const dir = await project('capability-app', 'commonjs', tarballs);
    copyFileSync(path.join(fixtures, 'capability.cts'), path.join(dir, 'capability.cts'));
    await run(process.execPath, [tsc, '-p', dir]);
    const { stdout } = await run(await userNode(), [path.join(dir, 'out/capability.cjs')], {
      env,
      timeout: 30_000,
    });
    assert.deepEqual(JSON.parse(stdout), {
      project: tenant.slug,
      left: 0,
      used: 2,
      refused: 'USAGE_LIMIT_EXCEEDED',
    });
  });

  test('a type error in a call is caught by tsc --strict: the types are the API’s', async () => {
    const dir = await project('typo-app', 'module', tarballs);
    writeFileSync(
      path.join(dir, 'typo.ts'),
      "import { PlatformClient } from '@platform-core/client';\n" +
        "const client = new PlatformClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1' });\n" +
        "await client.webhookEndpoints.create({ url: 'https://a.example', eventType: ['*'] });\n",
    );
    const failed = await run(process.execPath, [tsc, '-p', dir]).catch((error) => error);
    assert.match(String(failed.stdout), /typo\.ts.*eventType/s);
  });
});
