// Running the real `platform` CLI as child processes.
import { execFile } from 'node:child_process';
import { after } from 'node:test';
import { type Child, LISTENING, spawnNode } from '../../support/process.ts';

const MAIN = new URL('../../src/main.ts', import.meta.url).pathname;

/** The environment of a child: this one's, without the test run's database settings, plus extra. */
export function childEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PLATFORM_LOG_LEVEL: 'info' };
  delete env.DATABASE_URL;
  delete env.PLATFORM_TEST_ADMIN_URL;
  delete env.NODE_TEST_CONTEXT; // the child is not a test file
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: Record<string, string | undefined>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { env: childEnv(env), timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

export interface ServiceProcess extends Child {
  baseUrl: string;
}

/**
 * Starts `platform <command>` and waits until it listens (a worker: until it runs), or exits; killed
 * after the test file. A worker's baseUrl is ''.
 */
export async function startProcess(
  command: string,
  env: Record<string, string | undefined>,
): Promise<ServiceProcess> {
  const child = spawnNode(MAIN, [command], childEnv({ PORT: '0', ...env }));
  after(() => child.stop('SIGKILL'));
  if (command === 'worker') {
    await child.waitFor(/delivery worker \S+ running/, 30_000);
    return { ...child, baseUrl: '' };
  }
  return { ...child, baseUrl: await child.waitFor(LISTENING, 30_000) };
}
