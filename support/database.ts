// Databases for tests, benchmarks and CI: a new empty database on a PostgreSQL server, and its removal.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const NAME = /^[a-z0-9_]+$/;

/** The URL of database `name` on the server of `url`. */
export function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

async function onServer(serverUrl: string, sql: string) {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Creates database `name` on the server of serverUrl (which must answer: an unreachable one throws). */
export async function createNamedDatabase(serverUrl: string, name: string): Promise<string> {
  if (!NAME.test(name)) throw new Error(`not a database name: ${name}`);
  await onServer(serverUrl, `create database ${name}`);
  return withDatabase(serverUrl, name);
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  if (!NAME.test(name)) throw new Error(`not a database name: ${name}`);
  await onServer(serverUrl, `drop database if exists ${name} with (force)`);
}

/**
 * A new database with a random name, its URL and the function that drops it: empty, or a copy of
 * `template` (a database no session is connected to).
 */
export async function createDatabase(
  serverUrl: string,
  prefix = 't',
  template?: string,
): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  if (template === undefined) await createNamedDatabase(serverUrl, name);
  else {
    if (!NAME.test(template)) throw new Error(`not a database name: ${template}`);
    await onServer(serverUrl, `create database ${name} template ${template}`);
  }
  return { name, url: withDatabase(serverUrl, name), drop: () => dropDatabase(serverUrl, name) };
}

/** Where the database of url listens: a TCP address or a Unix socket (embedded). */
export function databaseAddress(url: string): { host: string; port: number } | { path: string } {
  const parsed = new URL(url);
  const socketDir = parsed.searchParams.get('host');
  if (socketDir?.startsWith('/')) return { path: `${socketDir}/.s.PGSQL.${parsed.port || 5432}` };
  return { host: parsed.hostname || '127.0.0.1', port: Number(parsed.port || 5432) };
}
