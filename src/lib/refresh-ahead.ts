// A cache whose entries are believed for a bounded time (a revoked key, a changed limit, reaches every
// process within it), refreshed ahead and in batches. Once a second, the entries read since they were
// loaded and older than the bound less two seconds are loaded again, all in one call, so an entry in use
// never runs out on a request's path; the misses of one turn of the event loop are loaded together too.
// With 1,000 projects publishing, re-reading each key and each project's limits every 5 s on requests'
// paths cost 400 round trips a second, a number that grows with the projects (bench/scale.ts); this costs
// two a second. An entry nobody reads is not refreshed: it runs out, and its next read loads it.
import { LRUCache } from 'lru-cache';

/** How often the entries in use are refreshed. */
export const REFRESH_EVERY_MS = 1000;

interface Entry<V> {
  value: V;
  /** when it was loaded */
  at: number;
  /** read since it was loaded */
  read: boolean;
}

export interface RefreshAheadOptions<K, V> {
  /** the most entries kept (the least recently read goes first) */
  max: number;
  /** how long an entry is believed, from when its load was sent */
  ttlMs: number;
  /** the values of these keys, every one of them, in one round trip */
  loadMany: (keys: K[]) => Promise<Map<K, V>>;
  now?: () => number;
}

export class RefreshAhead<K extends {}, V extends {}> {
  readonly #entries: LRUCache<K, Entry<V>>;
  readonly #inFlight = new Map<K, Promise<V>>();
  #batch: { keys: K[]; loaded: Promise<Map<K, V>> } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #refreshing = false;
  /** counts what was forgotten: a load sent before a forget keeps nothing it read */
  #forgets = 0;
  readonly #options: RefreshAheadOptions<K, V>;

  constructor(options: RefreshAheadOptions<K, V>) {
    this.#options = options;
    this.#entries = new LRUCache({ max: options.max });
  }

  #now = () => (this.#options.now ?? Date.now)();

  /** The value loaded within the bound, or undefined; no promise (the hot path). */
  fresh(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry || this.#now() - entry.at >= this.#options.ttlMs) return undefined;
    entry.read = true;
    return entry.value;
  }

  /** The value last loaded, however old, with when (what an outage falls back to). */
  last(key: K): { value: V; at: number } | undefined {
    return this.#entries.peek(key);
  }

  /** Believes `value` for the bound from now (what an outage falls back to). */
  set(key: K, value: V) {
    this.#entries.set(key, { value, at: this.#now(), read: true });
  }

  /** The fresh value, or one loaded now: the reads of one key share a load, the loads of one turn a batch. */
  async get(key: K): Promise<V> {
    const fresh = this.fresh(key);
    if (fresh !== undefined) return fresh;
    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = this.#load(key).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, pending);
    }
    return pending;
  }

  async #load(key: K): Promise<V> {
    if (!this.#batch) {
      const keys: K[] = [];
      const loaded = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.#batch = undefined;
        return this.#loadInto(keys);
      });
      this.#batch = { keys, loaded };
    }
    this.#batch.keys.push(key);
    const values = await this.#batch.loaded;
    return values.get(key) as V;
  }

  async #loadInto(keys: K[]): Promise<Map<K, V>> {
    const at = this.#now(); // what is read is at least this fresh
    const forgets = this.#forgets;
    const values = await this.#options.loadMany(keys);
    for (const key of keys) {
      const value = values.get(key);
      if (value === undefined) throw new Error(`loadMany gave no value for a key asked`);
      if (forgets === this.#forgets) this.#entries.set(key, { value, at, read: false });
    }
    return values;
  }

  /**
   * Forgets a key's value, and keeps nothing a load already sent reads (it may have read what was
   * there before the change that makes this forget): the next read loads it anew.
   */
  forget(key: K) {
    this.#forgets++;
    this.#entries.delete(key);
    this.#inFlight.delete(key);
  }

  /** Forgets the values that `which` picks, as forget does one. */
  forgetWhere(which: (value: V) => boolean) {
    this.#forgets++;
    for (const [key, entry] of this.#entries.entries()) if (which(entry.value)) this.#entries.delete(key);
    this.#inFlight.clear();
  }

  /** Forgets every value, as forget does one. */
  clear() {
    this.#forgets++;
    this.#entries.clear();
    this.#inFlight.clear();
  }

  /**
   * Loads again, in one call, the entries read since they were loaded that are past the bound less two
   * refreshes: refreshed each second, an entry in use is never older than the bound. A failed refresh
   * changes nothing; those entries run out and are loaded (or not) on their next read.
   */
  async refresh(): Promise<void> {
    const now = this.#now();
    const due: K[] = [];
    for (const [key, entry] of this.#entries.entries()) {
      const age = now - entry.at;
      if (entry.read && age >= this.#options.ttlMs - 2 * REFRESH_EVERY_MS && age < this.#options.ttlMs)
        due.push(key);
    }
    if (due.length === 0 || this.#refreshing) return;
    this.#refreshing = true;
    await this.#loadInto(due)
      .catch(() => {})
      .finally(() => {
        this.#refreshing = false;
      });
  }

  start() {
    this.#timer ??= setInterval(() => void this.refresh(), REFRESH_EVERY_MS);
    this.#timer.unref();
  }

  stop() {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
