// A fresh database per test file on the run's PostgreSQL (see test/setup.ts), dropped when done.
import { after } from 'node:test';
import { createDatabase as createOn } from '../../support/database.ts';

export { databaseAddress, withDatabase } from '../../support/database.ts';

export function adminUrl(): string {
  const url = process.env.PLATFORM_TEST_ADMIN_URL ?? process.env.DATABASE_URL;
  if (!url) throw new Error('run the tests with npm test (test/setup.ts provides the database)');
  return url;
}

/** The URL of a new empty database, dropped after the test file. */
export async function freshDatabase(): Promise<string> {
  const { url, drop } = await createDatabase();
  after(drop);
  return url;
}

/** A new empty database and the function that drops it (for callers that must close things first). */
export const createDatabase = () => createOn(adminUrl());

/**
 * A new database with every migration applied, and the function that drops it: a copy of the run's
 * migrated template (test/setup.ts): a copy took PostgreSQL 0.1–0.2 s here, migrating 0.4–1 s.
 * Without a template (a file run without the global setup), an empty one, which the caller migrates.
 */
export const createMigratedDatabase = () => createOn(adminUrl(), 't', process.env.PLATFORM_TEST_TEMPLATE);
