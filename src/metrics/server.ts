// The metrics listener: GET /metrics in Prometheus's text format, on its own port (never the API's:
// the figures are for the operator's network, and a scrape must not queue behind the API's traffic).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Metrics } from './metrics.ts';

export interface MetricsListener {
  /** http://host:port */
  address: string;
  close(): Promise<void>;
}

export async function serveMetrics(
  metrics: Metrics,
  listen: { host: string; port: number },
  log: Logger,
): Promise<MetricsListener> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('GET /metrics\n');
      return;
    }
    metrics.exposition().then(
      (text) => {
        response.writeHead(200, {
          'content-type': metrics.registry.contentType,
          'cache-control': 'no-store',
        });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        log.error({ err: error }, 'collecting metrics failed');
        response
          .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
          .end('collecting metrics failed\n');
      },
    );
  });
  server.keepAliveTimeout = 65_000; // longer than a scrape interval: one connection per scraper
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    address: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
