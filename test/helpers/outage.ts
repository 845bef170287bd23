// PostgreSQL going away under a test: the embedded cluster really restarted, or, for a server we do not
// own, every connection of a process cut through a proxy (as a restart looks to its clients).
import path from 'node:path';
import { after } from 'node:test';
import { openEmbeddedCluster } from '../../src/db/embedded.ts';
import { adminUrl, databaseAddress } from './database.ts';
import { type Proxy as DatabaseProxy, startProxy } from './proxy.ts';

const embedded = () => new URL(adminUrl()).searchParams.get('host')?.startsWith('/') ?? false;

/** A database URL a process can lose: the database's own when embedded, else one through a proxy. */
export async function outageUrl(
  databaseUrl: string,
): Promise<{ url: string; proxy: DatabaseProxy | undefined }> {
  if (embedded()) return { url: databaseUrl, proxy: undefined };
  const proxy = await startProxy(databaseAddress(databaseUrl));
  after(() => proxy.close());
  return { url: `postgresql://postgres@127.0.0.1:${proxy.port}${new URL(databaseUrl).pathname}`, proxy };
}

/** Takes the database away for 2 s (a restart, or the proxy cut), then back; resolves 2 s after that. */
export async function restartDatabase(proxy: DatabaseProxy | undefined) {
  const dataDir = () => path.dirname(new URL(adminUrl()).searchParams.get('host') as string);
  if (proxy) await proxy.cut();
  else await (await openEmbeddedCluster(dataDir(), () => {})).stop();
  await new Promise((resolve) => setTimeout(resolve, 2000));
  if (proxy) await proxy.restore();
  else await openEmbeddedCluster(dataDir(), () => {});
  await new Promise((resolve) => setTimeout(resolve, 2000));
}
