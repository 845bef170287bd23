// Global setup of `npm test`: the PostgreSQL every test file creates its fresh database on.
// DATABASE_URL set → that server (CI sets it to a database of its own); unset → one embedded cluster for
// the whole run, in a temporary directory, stopped and removed at the end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type EmbeddedCluster, openEmbeddedCluster } from '../src/db/embedded.ts';

let cluster: EmbeddedCluster | undefined;
let directory: string | undefined;

export async function globalSetup() {
  if (process.env.DATABASE_URL) {
    process.env.PLATFORM_TEST_ADMIN_URL = process.env.DATABASE_URL;
    console.log('tests run on the PostgreSQL server of DATABASE_URL');
    return;
  }
  directory = mkdtempSync(path.join(tmpdir(), 'pct-'));
  cluster = await openEmbeddedCluster(directory, () => {});
  process.env.PLATFORM_TEST_ADMIN_URL = cluster.url;
  console.log(`tests run on an embedded PostgreSQL in ${directory}`);
}

export async function globalTeardown() {
  await cluster?.stop();
  if (directory) rmSync(directory, { recursive: true, force: true });
}
