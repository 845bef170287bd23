// Forward-only migrations: the .sql files of ./migrations in name order, each in its own transaction,
// all under one advisory lock so that several processes starting at once migrate exactly once.
import { readdirSync, readFileSync } from 'node:fs';
import { type Database, type Db, pgCode } from './database.ts';

const DIRECTORY = new URL('./migrations/', import.meta.url);
const LOCK = 7_310_001; // pg_advisory_lock key of the migrator

export interface Migration {
  name: string;
  sql: string;
}

/** The migrations this build knows, read once. */
export const MIGRATIONS: readonly Migration[] = readdirSync(DIRECTORY)
  .filter((file) => file.endsWith('.sql'))
  .sort()
  .map((file) => ({ name: file.replace(/\.sql$/, ''), sql: readFileSync(new URL(file, DIRECTORY), 'utf8') }));

/** Applies what is pending (up to and including `until`, when given); returns the names applied by this call. */
export async function migrate(db: Database, until?: string): Promise<string[]> {
  const client = await db.pool.connect();
  try {
    await client.query('set statement_timeout = 0'); // a migration may take as long as it takes
    await client.query('select pg_advisory_lock($1)', [LOCK]);
    await client.query(`
      create table if not exists schema_migrations (
        name text primary key,
        applied_at timestamptz not null default now()
      )`);
    const done = new Set(await appliedMigrations(client));
    const applied: string[] = [];
    const wanted = MIGRATIONS.filter((m) => !done.has(m.name) && (until === undefined || m.name <= until));
    for (const migration of wanted) {
      await client.query('begin');
      try {
        await client.query(migration.sql);
        await client.query('insert into schema_migrations (name) values ($1)', [migration.name]);
        await client.query('commit');
      } catch (error) {
        await client.query('rollback');
        throw new Error(`migration ${migration.name} failed: ${(error as Error).message}`);
      }
      applied.push(migration.name);
    }
    return applied;
  } finally {
    await client.query('select pg_advisory_unlock($1)', [LOCK]).catch(() => {});
    client.release();
  }
}

/** Names of applied migrations in order; empty when none ever ran. */
export async function appliedMigrations(db: Db): Promise<string[]> {
  const { rows } = await db
    .query<{ name: string }>(`select name from schema_migrations order by name`)
    .catch((error) => {
      if (pgCode(error) === '42P01') return { rows: [] }; // the table does not exist yet
      throw error;
    });
  return rows.map((row) => row.name);
}
