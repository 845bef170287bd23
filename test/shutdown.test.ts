// Stopping and starting well: SIGTERM drains keep-alive load without resetting a request, an older Node
// is told at once which Node the service needs, and a long-running process caps its young generation.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { LISTENING, spawnNode } from '../support/process.ts';
import { startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { childEnv, startProcess } from './helpers/process.ts';

const setup = await startService();
const tenant = await setup.tenant();

describe('shutdown and start-up', () => {
  test('SIGTERM under keep-alive load: every request answered, none reset; the process exits 0', {
    timeout: 60_000,
  }, async () => {
    const serve = await startProcess('serve', {
      DATABASE_URL: setup.context.config.databaseUrl,
      PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      PLATFORM_RATE_LIMIT_PER_SECOND: '0',
      PLATFORM_SHUTDOWN_DELAY_MS: '1000',
      PLATFORM_LOG_LEVEL: 'warn',
    });
    const agent = new Agent({ keepAliveTimeout: 60_000, connections: 16 });
    const outcomes = new Map<string, number>();
    let signalled = false;
    let afterSignal = 0;
    const loops = Array.from({ length: 16 }, async () => {
      for (;;) {
        try {
          const response = await request(`${serve.baseUrl}/core/v1/webhook-endpoints`, {
            headers: { 'x-api-key': tenant.key },
            dispatcher: agent,
          });
          await response.body.dump();
          outcomes.set(String(response.statusCode), (outcomes.get(String(response.statusCode)) ?? 0) + 1);
          if (signalled) afterSignal++;
        } catch (error) {
          const code = (error as { code?: string }).code ?? 'error';
          outcomes.set(code, (outcomes.get(code) ?? 0) + 1);
          if (code === 'ECONNREFUSED') return; // the listener has closed: this client is done
          if (!signalled) throw error;
        }
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    signalled = true;
    const exited = serve.stop('SIGTERM');
    await Promise.all(loops);
    assert.equal(await exited, 0, serve.output());
    await agent.close();
    const seen = Object.fromEntries(outcomes);
    for (const outcome of Object.keys(seen))
      assert.ok(['200', 'ECONNREFUSED'].includes(outcome), `no reset, no error: ${JSON.stringify(seen)}`);
    assert.ok(
      afterSignal > 0,
      `requests were still answered while the process drained: ${JSON.stringify(seen)}`,
    );
  });

  test('the bin caps the young generation of a long-running process, in that process, unless the caller chose', {
    skip: process.platform !== 'linux' && 'reads /proc',
  }, async () => {
    const bin = new URL('../bin/platform.js', import.meta.url).pathname;
    /** The flags the process the bin started runs with, read from /proc by the pid it was started as. */
    const flagsOf = async (nodeOptions: string | undefined) => {
      const env = childEnv({
        PORT: '0',
        DATABASE_URL: setup.context.config.databaseUrl,
        PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
        NODE_OPTIONS: nodeOptions,
      });
      const serve = spawnNode(bin, ['serve'], env);
      try {
        await serve.waitFor(LISTENING, 30_000);
        return readFileSync(`/proc/${serve.child.pid}/cmdline`, 'utf8').split('\0');
      } finally {
        assert.equal(await serve.stop('SIGTERM'), 0, serve.output());
      }
    };
    const capped = await flagsOf(undefined);
    assert.ok(capped.includes('--max-semi-space-size=8'), capped.join(' '));
    assert.ok(capped.includes('serve'), capped.join(' '));
    const chosen = await flagsOf('--max-semi-space-size=16');
    assert.ok(!chosen.some((flag) => flag.includes('semi-space')), chosen.join(' '));
  });

  test('an older Node is told which Node is needed, and how to get it', async (t) => {
    const older = ['/usr/bin/node', '/usr/local/bin/node', '/usr/bin/nodejs'].find(
      (candidate) => existsSync(candidate) && candidate !== process.execPath,
    );
    if (!older) return t.skip('no other Node on this machine');
    const version = await new Promise<string>((resolve) =>
      execFile(older, ['--version'], (_error, stdout) => resolve(stdout.trim())),
    );
    if (Number(version.replace(/^v/, '').split('.')[0]) >= 24) return t.skip(`the other Node is ${version}`);
    const bin = new URL('../bin/platform.js', import.meta.url).pathname;
    const result = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile(older, [bin, 'start'], { timeout: 20_000 }, (error, _stdout, stderr) =>
        resolve({ code: (error as { code?: number } | null)?.code ?? 0, stderr }),
      ),
    );
    assert.equal(result.code, 1);
    assert.match(result.stderr, new RegExp(`needs Node.js 24 or newer; this is Node ${version.slice(1)}`));
    assert.match(result.stderr, /npm ci/);
    assert.doesNotMatch(result.stderr, /SyntaxError|at .+:\d+:\d+/, 'a message, not a stack');
  });
});
