// The reference capabilities of examples/ as the processes of their own they are: started with their
// environment, stopped after the test file, and awaited until they listen.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after } from 'node:test';
import { eventually } from './receiver.ts';

/** Starts examples/<name>/src/main.ts; resolves with its address once it says it listens. */
export async function startExample(
  name: string,
  env: Record<string, string>,
): Promise<{ url: string; output(): string }> {
  const child = spawn(process.execPath, [`examples/${name}/src/main.ts`], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  after(() => child.kill('SIGKILL'));
  let output = '';
  for (const stream of [child.stdout, child.stderr])
    stream.on('data', (chunk: Buffer) => {
      output += chunk;
    });
  const url = await eventually(
    async () => /listening on (http:\S+)/.exec(output)?.[1],
    20_000,
    `${name} listening`,
  );
  return { url, output: () => output };
}

/** A port free now (an example listens on it; the operator registers it as the upstream first). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
