// A real HTTP receiver on loopback (support/receiver.ts): records every delivery (raw body, headers) and
// answers as told; closed after the test file.
import type { ServerResponse } from 'node:http';
import { after } from 'node:test';
import { createReceiver, type Received } from '../../support/receiver.ts';

export type { Received };

export type Answer = (received: Received, index: number, response: ServerResponse) => unknown;

export const answerWith =
  (status: number, headers: Record<string, string> = {}, body = ''): Answer =>
  (_received, _index, response) => {
    response.writeHead(status, headers).end(body);
  };

export async function startReceiver(answer: Answer = answerWith(204)) {
  const received: Received[] = [];
  let current = answer;
  const waiters: { count: number; resolve: () => void }[] = [];
  const receiver = await createReceiver((entry, response) => {
    received.push(entry);
    for (const waiter of waiters.filter((w) => received.length >= w.count)) waiter.resolve();
    void current(entry, received.length - 1, response);
  });
  after(() => receiver.close());
  return {
    url: `${receiver.url}/hook`,
    port: receiver.port,
    received,
    answer(next: Answer) {
      current = next;
    },
    /** Resolves once `count` deliveries have arrived (rejects after timeoutMs). */
    waitFor(count: number, timeoutMs = 20_000) {
      if (received.length >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${received.length} of ${count} deliveries after ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
  };
}

/** Polls until check() holds (for database states reached asynchronously). */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
