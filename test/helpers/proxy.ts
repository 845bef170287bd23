// A TCP proxy in front of the test database, so a test can cut the service off from PostgreSQL
// (close every connection and refuse new ones) and restore it, without touching the server itself.
import net from 'node:net';

export interface Proxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startProxy(target: { host: string; port: number } | { path: string }): Promise<Proxy> {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;

  const listen = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(target);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server?.address() as net.AddressInfo | null)?.port ?? port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (server) server.close(() => resolve());
      else resolve();
      server = undefined;
    });

  await listen();
  return { port, cut: stop, restore: listen, close: stop };
}
