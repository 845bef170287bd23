// A fresh database per test file on the run's PostgreSQL (see test/setup.ts), dropped when done.
import { randomBytes } from 'node:crypto';
import { after } from 'node:test';
import pg from 'pg';

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
export async function createDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client(adminUrl());
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const drop = async () => {
    const client = new pg.Client(adminUrl());
    await client.connect();
    await client.query(`drop database if exists ${name} with (force)`);
    await client.end();
  };
  return { url: withDatabase(adminUrl(), name), drop };
}

export function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** Where the database of url listens: a TCP address or a Unix socket (embedded). */
export function databaseAddress(url: string): { host: string; port: number } | { path: string } {
  const parsed = new URL(url);
  const socketDir = parsed.searchParams.get('host');
  if (socketDir?.startsWith('/')) return { path: `${socketDir}/.s.PGSQL.${parsed.port || 5432}` };
  return { host: parsed.hostname || '127.0.0.1', port: Number(parsed.port || 5432) };
}
