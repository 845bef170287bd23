// A webhook receiver on loopback: an HTTP server that reads each request's whole body, then hands it on.
// Tests record and answer with it (test/helpers/receiver.ts); the delivery benchmarks run it as a process
// of its own (bench/load/receiver.ts).
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  body: string;
  headers: IncomingHttpHeaders;
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  close(): void;
}

export async function createReceiver(
  handle: (received: Received, response: ServerResponse, request: IncomingMessage) => void,
): Promise<Receiver> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const received = {
        method: request.method ?? 'GET',
        path: request.url ?? '/',
        body: Buffer.concat(chunks).toString('utf8'),
        headers: request.headers,
        at: Date.now(),
      };
      handle(received, response, request);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}
