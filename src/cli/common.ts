// What every CLI command shares: its arguments, its database (migrated first), the audit of its changes
// (actor `cli`, one request id per command), and its output (one JSON object with --json, else text).
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { auditInto } from '../audit/store.ts';
import type { Config } from '../config.ts';
import type { Database, Db } from '../db/database.ts';
import { migrate } from '../db/migrate.ts';
import { PlatformError } from '../errors.ts';
import { type Page, pageOf } from '../pagination.ts';
import { projectService } from '../projects/service.ts';
import { connect, createLogger } from '../runtime.ts';
import { readOnly, type Work } from '../work.ts';

/** Wrong usage: exit code 2, with the usage text. */
export class UsageError extends Error {}

type Options = NonNullable<Parameters<typeof parseArgs>[0]>['options'];

/** The command's flags (every command takes --json); positionals when `positionals` is true. */
export function flags<O extends Options>(args: string[], options: O, positionals = false) {
  return parseArgs({
    args,
    options: { ...options, json: { type: 'boolean', default: false } },
    allowPositionals: positionals,
  });
}

/** Flags a command cannot do without. */
export function required<T extends Record<string, unknown>, K extends keyof T & string>(
  values: T,
  command: string,
  names: K[],
): { [P in K]-?: Exclude<T[P], undefined> } {
  const missing = names.filter((name) => values[name] === undefined);
  if (missing.length)
    throw new UsageError(`${command} needs ${missing.map((name) => `--${name}`).join(', ')}`);
  return values as unknown as { [P in K]-?: Exclude<T[P], undefined> };
}

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

/** One JSON object with --json, else the text. */
export function print(json: boolean | undefined, value: unknown, text: () => string) {
  console.log(json ? JSON.stringify(value) : text());
}

/** A comma-separated list. */
export const list = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

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
