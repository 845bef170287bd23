// Global setup of `npm test`: the PostgreSQL every test file creates its fresh databases on.
// DATABASE_URL set → that server (CI sets it to a database of its own); unset → one embedded cluster for
// the whole run, in a temporary directory, stopped and removed at the end.
//
// It also migrates a template database once, which test services copy (test/helpers/database.ts)
// instead of migrating a new database each.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase } from '../src/db/database.ts';
import { type EmbeddedCluster, openEmbeddedCluster } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { createDatabase } from '../support/database.ts';

let cluster: EmbeddedCluster | undefined;
let directory: string | undefined;
let dropTemplate: (() => Promise<void>) | undefined;

export async function globalSetup() {
  if (process.env.DATABASE_URL) {
    process.env.PLATFORM_TEST_ADMIN_URL = process.env.DATABASE_URL;
    console.log('tests run on the PostgreSQL server of DATABASE_URL');
  } else {
    directory = mkdtempSync(path.join(tmpdir(), 'pct-'));
    cluster = await openEmbeddedCluster(directory, () => {});
    process.env.PLATFORM_TEST_ADMIN_URL = cluster.url;
    console.log(`tests run on an embedded PostgreSQL in ${directory}`);
  }
  const template = await createDatabase(process.env.PLATFORM_TEST_ADMIN_URL, 'template');
  dropTemplate = template.drop;
  const db = openDatabase(template.url, { max: 1 });
  try {
    await migrate(db);
  } finally {
    await db.close(); // no session may stay connected to a template that is copied
  }
  process.env.PLATFORM_TEST_TEMPLATE = template.name;
}

export async function globalTeardown() {
  await dropTemplate?.();
  await cluster?.stop();
  if (directory) rmSync(directory, { recursive: true, force: true });
}
