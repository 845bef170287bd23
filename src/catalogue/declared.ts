// The event types each project declares, with their schemas and versions, as this process last read them
// (at most a minute ago). Sole writes predict from them, and their statements check the prediction against
// the catalogue itself, so an old reading costs a miss (the ordinary way, which reads them again), never a
// wrong answer; so they are believed for a minute, not the 5 s of a key (1,000 projects publishing read
// them 200 times a second at 5 s: bench/scale.ts):
// - a create of a webhook endpoint, which of its types nobody declares;
// - a publish, the schema its data is checked against (the statement checks the type's version).
import { LRUCache } from 'lru-cache';
import type { Db } from '../db/database.ts';
import { eventTypeStore } from './store.ts';

export interface Declared {
  /** the schema's JSON text, as the validation thread takes it */
  schema: string | null;
  /** when it last changed, in µs (catalogue/store.ts VERSION) */
  version: number;
}

export class DeclaredTypes {
  readonly #db: Db;
  /**
   * each project's declared types, believed for a minute; at most 32 MiB of schemas (a project may declare up
   * to 64 MiB, so the bound is on their text, not on the number of projects)
   */
  readonly #read = new LRUCache<string, Map<string, Declared>>({
    maxSize: 32 * 1024 * 1024,
    sizeCalculation: (types) => {
      let size = 1;
      for (const [name, { schema }] of types) size += name.length + (schema?.length ?? 0);
      return size;
    },
    ttl: 60_000,
  });

  constructor(db: Db) {
    this.#db = db;
  }

  /** The project's declared types as last read, or as they are now when `fresh` (which reads them again). */
  async of(projectId: string, fresh = false): Promise<Map<string, Declared>> {
    const read = fresh ? undefined : this.#read.get(projectId);
    if (read) return read;
    const rows = await eventTypeStore(this.#db).declared(projectId);
    const types = new Map(rows.map(({ name, schema, version }) => [name, { schema, version }]));
    this.#read.set(projectId, types);
    return types;
  }
}
