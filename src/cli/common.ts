// What the CLI's database commands share: the database (migrated first), the audit of their changes
// (actor `cli`, one request id per command), projects by slug, and paged lists read whole. Their
// arguments and output are arguments.ts's.
import { randomUUID } from 'node:crypto';
import { auditInto } from '../audit/store.ts';
import { readOnly, type Work } from '../audit/work.ts';
import type { Database, Db } from '../db/database.ts';
import { migrate } from '../db/migrate.ts';
import type { Config } from '../lib/config.ts';
import { PlatformError } from '../lib/errors.ts';
import { type Page, pageOf } from '../lib/pagination.ts';
import { projectService } from '../projects/service.ts';
import { connect, createLogger } from './runtime.ts';

/** Runs fn on the database (the embedded one attached or started for the command), migrated first. */
export async function withDatabase<T>(config: Config, fn: (db: Database) => Promise<T>): Promise<T> {
  const connection = await connect(config, 'command', createLogger({ ...config, logLevel: 'warn' }));
  try {
    await migrate(connection.db);
    return await fn(connection.db);
  } finally {
    await connection.close();
  }
}

/** Runs a change in one transaction, its unit of work audited as the CLI's. */
export function change<T>(db: Database, fn: (work: Work) => Promise<T>): Promise<T> {
  return db.transaction((tx, hooks) =>
    fn({ db: tx, hooks, audit: auditInto({ actor: { type: 'cli' }, requestId: randomUUID() }, hooks) }),
  );
}

/** The project a slug names, or a refusal. */
export async function projectBySlug(db: Db, slug: string) {
  const project = await projectService(readOnly(db)).findBySlug(slug);
  if (!project) throw new PlatformError('NOT_FOUND', `no project with slug "${slug}"`);
  return project;
}

/** Every row of a paged list, a page at a time. */
export async function everyPage<T>(fetch: (page: Page) => Promise<{ data: T[]; nextCursor: string | null }>) {
  const all: T[] = [];
  let page: Page = { limit: 100, after: undefined };
  for (;;) {
    const { data, nextCursor } = await fetch(page);
    all.push(...data);
    if (!nextCursor) return all;
    page = { limit: 100, after: pageOf({ cursor: nextCursor }).after };
  }
}
