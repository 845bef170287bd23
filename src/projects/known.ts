// Which project ids exist, remembered once seen: a project is never deleted, so an id found once is found
// for good, and the capability plane's hot paths (usage batches, reservations) ask the database only
// about ids this process has not met yet.
import { LRUCache } from 'lru-cache';
import type { Db } from '../db/database.ts';

const REMEMBERED = 100_000;

export class KnownProjects {
  readonly #db: Db;
  readonly #known = new LRUCache<string, true>({ max: REMEMBERED });

  constructor(db: Db) {
    this.#db = db;
  }

  /** The ids among these of projects that exist. */
  async existing(ids: Iterable<string>): Promise<Set<string>> {
    const found = new Set<string>();
    const unknown: string[] = [];
    for (const id of new Set(ids)) {
      if (this.#known.has(id)) found.add(id);
      else unknown.push(id);
    }
    if (unknown.length === 0) return found;
    const { rows } = await this.#db.query<{ id: string }>({
      name: 'projects-existing',
      text: 'select id from projects where id = any($1::uuid[])',
      values: [unknown],
    });
    for (const { id } of rows) {
      this.#known.set(id, true);
      found.add(id);
    }
    return found;
  }
}
