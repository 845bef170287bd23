// The event types each project declares, with their schemas and versions, as this process last read them
// (at most 5 seconds ago). Sole writes foresee from them, and their statements check the foresight against
// the catalogue itself, so an old reading costs a miss (the ordinary way), never a wrong answer:
// - a create of a webhook endpoint, which of its types nobody declares;
// - a publish, the schema its data is checked against (the statement checks the type's version).
import type { Db } from '../db/database.ts';
import { eventTypeStore } from './store.ts';

const TTL_MS = 5000;
/** projects remembered at most; the oldest reading goes first */
const MAX_PROJECTS = 10_000;

export interface Declared {
  schema: object | null;
  /** when it last changed, in µs (catalogue/store.ts VERSION) */
  version: number;
}

export class DeclaredTypes {
  readonly #db: Db;
  readonly #read = new Map<string, { at: number; types: Map<string, Declared> }>();

  constructor(db: Db) {
    this.#db = db;
  }

  /** The project's declared types as last read, or as they are now when `fresh` (which reads them again). */
  async of(projectId: string, fresh = false): Promise<Map<string, Declared>> {
    const now = Date.now();
    const read = this.#read.get(projectId);
    if (read && now - read.at < TTL_MS && !fresh) return read.types;
    const rows = await eventTypeStore(this.#db).declared(projectId);
    const types = new Map(rows.map(({ name, schema, version }) => [name, { schema, version }]));
    this.#read.delete(projectId);
    this.#read.set(projectId, { at: now, types });
    if (this.#read.size > MAX_PROJECTS) this.#read.delete(this.#read.keys().next().value as string);
    return types;
  }
}
