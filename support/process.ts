// Child processes for tests and benchmarks: run a script with this Node (the pinned Node 24) or another
// program (Prometheus, Redis), collect its output, wait for a line of it, and stop it.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

export interface Child {
  child: ChildProcess;
  output(): string;
  /** Resolves with the first capture of pattern in the output (rejects if the child exits first). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Sends the signal (if the child still runs) and resolves with its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs `node [flags] script args` in the given environment (the whole environment: nothing is added). */
export function spawnNode(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  nodeFlags: string[] = [],
): Child {
  return spawnProgram(process.execPath, [...nodeFlags, script, ...args], env, script);
}

/** Runs a program in the given environment; `name` is how failures name it. */
export function spawnProgram(program: string, args: string[], env: NodeJS.ProcessEnv, name = program): Child {
  const child = spawn(program, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk;
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  child.on('error', (error) => append(Buffer.from(`${name}: ${error.message}\n`))); // e.g. not installed
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    // A program that never started (not installed) has no exit event: waiting for one hung the test.
    child.once('error', () => child.pid === undefined && resolve(null));
  });
  return {
    child,
    output: () => output,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${name}: no ${pattern} after ${timeoutMs} ms\n${output.slice(-2000)}`)),
          timeoutMs,
        );
        const check = () => {
          const match = pattern.exec(output);
          if (!match) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve(match[1] ?? match[0]);
        };
        listeners.add(check);
        void exited.then((code) => {
          if (pattern.test(output)) return;
          clearTimeout(timer);
          listeners.delete(check);
          reject(new Error(`${name} exited (${code}) before ${pattern}:\n${output.slice(-2000)}`));
        });
        check();
      });
    },
    stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** A port free on loopback now (for a program that takes a fixed address: Prometheus, redis-server). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The line a service process prints once it listens, with its address. */
export const LISTENING = /platform-core listening on (http:\/\/[^"\s]+)/;
