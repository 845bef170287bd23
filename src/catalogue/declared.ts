// The event types each project declares, as this process last read them (at most 5 seconds ago). A create
// of a webhook endpoint foresees its answer from them (which of its types nobody declares) and goes as a
// sole write; the statement checks the foresight against the catalogue itself, so an old reading costs a
// miss (the ordinary way), never a wrong answer.
import type { Db } from '../db/database.ts';
import { eventTypeStore } from './store.ts';

const TTL_MS = 5000;
/** projects remembered at most; the oldest reading goes first */
const MAX_PROJECTS = 10_000;

export class DeclaredTypes {
  readonly #db: Db;
  readonly #read = new Map<string, { at: number; names: Set<string> }>();

  constructor(db: Db) {
    this.#db = db;
  }

  async of(projectId: string): Promise<Set<string>> {
    const now = Date.now();
    const read = this.#read.get(projectId);
    if (read && now - read.at < TTL_MS) return read.names;
    const names = new Set(await eventTypeStore(this.#db).names(projectId));
    this.#read.delete(projectId);
    this.#read.set(projectId, { at: now, names });
    if (this.#read.size > MAX_PROJECTS) this.#read.delete(this.#read.keys().next().value as string);
    return names;
  }
}
