// Running the real `platform` CLI as child processes.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { after } from 'node:test';

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

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  output(): string;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `platform <command>` and waits until it listens (or exits). */
export async function startProcess(
  command: string,
  env: Record<string, string | undefined>,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [MAIN, command], {
    env: childEnv({ PORT: '0', ...env }),
    stdio: 'pipe',
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not listening after 30 s:\n${output}`)), 30_000);
    const check = () => {
      const match = /platform-core listening on (http:\/\/[^"\s]+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening:\n${output}`));
    });
  });
  return {
    child,
    baseUrl,
    output: () => output,
    stop: (signal = 'SIGTERM') => {
      child.kill(signal);
      return exited;
    },
  };
}
