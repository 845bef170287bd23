// Every example runs from its README as written: each ```sh block of examples/notify and examples/ai is run
// literally by bash, in the repository's root, with nothing but the platform running (a service on a
// fresh database with the project `dev`, as `npm start` makes it; the CLI pointed at the same database).
// A README that drifts from its example's code fails here.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { after, describe, test } from 'node:test';
import { startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { freshDatabase } from './helpers/database.ts';
import { childEnv, runCli } from './helpers/process.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const databaseUrl = await freshDatabase();
const service = await startService({ databaseUrl });
const env = childEnv({
  DATABASE_URL: databaseUrl,
  PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
  PLATFORM_URL: service.baseUrl,
  PLATFORM_LOG_LEVEL: 'warn',
});
const dev = await runCli(['projects', 'create', '--slug', 'dev', '--name', 'Development'], env);
assert.equal(dev.code, 0, dev.stderr);

/** The ```sh blocks of a README, in order. */
async function shellBlocks(readme: string): Promise<string[]> {
  const text = await readFile(new URL(readme, new URL('..', import.meta.url)), 'utf8');
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string);
}

/** Runs a script as bash does from a terminal, in the repository's root; what it printed. Its jobs end after. */
function runBash(script: string): Promise<{ code: number | null; output: string }> {
  const child = spawn('bash', ['-e', '-c', script], { cwd: ROOT, env, detached: true });
  after(() => {
    try {
      process.kill(-(child.pid as number), 'SIGTERM'); // the example it started in the background too
    } catch {}
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

describe('the examples run from their READMEs as written', () => {
  after(async () => {
    for (const name of ['notify', 'ai', 'pay', 'billing'])
      await rm(new URL(`../examples/${name}/capability.json`, import.meta.url), { force: true });
    for (const name of ['notify', 'pay', 'billing'])
      await rm(new URL(`../examples/${name}/.data`, import.meta.url), { recursive: true, force: true });
  });

  test('examples/notify: registered, started with its mailbox, a message sent through the gateway', async () => {
    const blocks = await shellBlocks('examples/notify/README.md');
    assert.equal(blocks.length, 1);
    const { code, output } = await runBash(blocks[0] as string);
    assert.equal(code, 0, output);
    assert.match(output, /\{"id":"[0-9a-f-]{36}","status":"sent"\}/, output);
    assert.match(
      output,
      /\[\{"to":"ada@example.com","subject":"Hi","text":"Hello","caughtAt":"[^"]+"\}\]/,
      output,
    );
  });

  test('examples/ai: registered, started, a completion through the gateway with a key holding ai:complete', async () => {
    const blocks = await shellBlocks('examples/ai/README.md');
    assert.equal(blocks.length, 1);
    const { code, output } = await runBash(blocks[0] as string);
    assert.equal(code, 0, output);
    assert.match(output, /\{"text":"three two one","tokens":6\}/, output);
  });

  test('examples/pay: registered, started with its processor, one charge sent twice is one payment', async () => {
    const blocks = await shellBlocks('examples/pay/README.md');
    assert.equal(blocks.length, 1);
    const { code, output } = await runBash(blocks[0] as string);
    assert.equal(code, 0, output);
    const answers = [
      ...output.matchAll(/\{"id":"([0-9a-f-]{36})","amount":4200,"currency":"eur","status":"succeeded"/g),
    ];
    assert.equal(answers.length, 2, output);
    assert.equal(answers[0]?.[1], answers[1]?.[1], 'the retried charge is answered with the same payment');
  });

  test('examples/billing: granted, started, a period closed into an invoice the project reads', async () => {
    const blocks = await shellBlocks('examples/billing/README.md');
    assert.equal(blocks.length, 1);
    const { code, output } = await runBash(blocks[0] as string);
    assert.equal(code, 0, output);
    const closed =
      /\{"invoiceId":"([0-9a-f-]{36})","projectId":"[0-9a-f-]{36}","from":"\d{4}-\d{2}-01","to":"\d{4}-\d{2}-\d{2}","totalMinor":(\d+),"currency":"eur"\}/.exec(
        output,
      );
    assert.ok(closed, output);
    assert.ok(Number(closed[2]) >= 2, 'three events at half a cent each, at least');
    assert.match(
      output,
      new RegExp(`\\{"data":\\[\\{"id":"${closed[1]}"`),
      'the project reads it through the gateway',
    );
  });
});
