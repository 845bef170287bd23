// Stopping the API without resetting anyone's request, in three steps:
//  1. For PLATFORM_SHUTDOWN_DELAY_MS (default 1 s) it serves as before, but /readyz answers 503, so that
//     a load balancer stops sending it requests.
//  2. It stops accepting connections, and every answer from then on carries `connection: close`, so each
//     keep-alive connection ends after the answer it is waiting for. A connection idle for a further
//     second (its client is not sending) is closed then.
//  3. Once every connection has ended, or PLATFORM_SHUTDOWN_TIMEOUT_MS (default 10 s) after the signal,
//     whichever comes first, the sockets still open are closed and the API has stopped.
// Step 2 closes the listening socket alone: http.Server#close would also close every idle keep-alive
// connection at once, resetting the request a client may be sending on one at that very moment.
import net from 'node:net';
import type { FastifyInstance } from 'fastify';

const IDLE_GRACE_MS = 1000;

export interface Drain {
  /** true from the signal on: /readyz answers 503 */
  readonly draining: boolean;
  /** Runs the whole shutdown of the listener; resolves when every connection is closed. */
  drain(options: { delayMs: number; timeoutMs: number }): Promise<void>;
}

export function registerDrain(app: FastifyInstance): Drain {
  let draining = false;
  let closing = false;
  app.addHook('onRequest', (_request, reply, done) => {
    if (closing) reply.header('connection', 'close');
    done();
  });
  return {
    get draining() {
      return draining;
    },
    async drain({ delayMs, timeoutMs }) {
      draining = true;
      const server = app.server;
      if (server.listening) {
        await sleep(Math.min(delayMs, timeoutMs));
        closing = true;
        const closed = new Promise<void>((resolve) =>
          net.Server.prototype.close.call(server, () => resolve()),
        );
        const idle = setTimeout(() => server.closeIdleConnections(), IDLE_GRACE_MS);
        const deadline = setTimeout(() => server.closeAllConnections(), Math.max(0, timeoutMs - delayMs));
        await closed;
        clearTimeout(idle);
        clearTimeout(deadline);
      }
      await app.close(); // Fastify's own onClose hooks (the server has already stopped)
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
