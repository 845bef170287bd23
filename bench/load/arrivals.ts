// A webhook receiver on a thread of its own, noting each webhook-id's first arrival. The latency loads
// publish and receive in one process, so that both times come from one clock; at 2,000 publishes a
// second that process's event loop is busy with the publishing, and a receiver sharing it answered so
// late that the worker's sends timed out. Times are absolute (performance.timeOrigin + now(), in ms),
// which both threads read alike.
import { createServer } from 'node:http';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';

export const now = () => performance.timeOrigin + performance.now();

type Request = { ask: 'collect' | 'clear' };

export async function startArrivals() {
  const worker = new Worker(new URL(import.meta.url));
  const url = await new Promise<string>((resolve) => worker.once('message', resolve));
  const ask = <T>(ask: Request['ask']) =>
    new Promise<T>((resolve) => {
      worker.once('message', resolve);
      worker.postMessage({ ask });
    });
  const collect = () => ask<Map<string, number>>('collect');
  return {
    url,
    clear: () => ask<void>('clear'),
    close: () => worker.terminate(),
    /**
     * Waits up to 30 s for every answered publish (webhook-id → its answer's time) to arrive; each one's
     * latency, sorted (Infinity for one that never came), and how many never came.
     */
    async latencies(answered: Map<string, number>) {
      const deadline = performance.now() + 30_000;
      let arrived = await collect();
      while (arrived.size < answered.size && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        arrived = await collect();
      }
      const sorted = [...answered]
        .map(([id, at]) => (arrived.get(id) ?? Number.POSITIVE_INFINITY) - at)
        .sort((a, b) => a - b);
      const quantile = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;
      return { sorted, quantile, lost: sorted.filter((l) => l === Number.POSITIVE_INFINITY).length };
    },
  };
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  let arrived = new Map<string, number>();
  const server = createServer((request, response) => {
    const id = request.headers['webhook-id'];
    if (typeof id === 'string' && !arrived.has(id)) arrived.set(id, now());
    request.resume();
    request.on('end', () => response.writeHead(204).end());
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    port.postMessage(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
  });
  port.on('message', ({ ask }: Request) => {
    if (ask === 'collect') port.postMessage(arrived);
    else {
      arrived = new Map();
      port.postMessage(undefined);
    }
  });
}
