// When each key was last used, to the minute, without a write per request: a request notes its key's
// current minute in memory (a map lookup), and the minutes noted are written in one statement every 30 s
// and at shutdown. lastUsedAt is therefore at most a minute behind (docs/management.md: accurate to 1 minute).
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { keyStore } from './store.ts';

const FLUSH_MS = 30_000;
const MINUTE_MS = 60_000;

export class KeyActivity {
  /** the last minute noted per key, and the keys noted since the last flush */
  private readonly noted = new Map<string, number>();
  private pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private readonly db: Db;
  private readonly log: Logger;

  constructor(deps: { db: Db; log: Logger }) {
    this.db = deps.db;
    this.log = deps.log;
  }

  touch(keyId: string, now = Date.now()): void {
    const minute = Math.floor(now / MINUTE_MS);
    if (this.noted.get(keyId) === minute) return;
    this.noted.set(keyId, minute);
    this.pending.add(keyId);
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const keys = this.pending;
    this.pending = new Set();
    const used = [...keys].map((id) => ({ id, at: new Date((this.noted.get(id) ?? 0) * MINUTE_MS) }));
    try {
      await keyStore(this.db).touch(used);
    } catch (error) {
      for (const id of keys) this.pending.add(id); // tried again at the next flush
      this.log.warn({ err: error }, 'recording when keys were last used failed; retrying');
    }
    if (this.noted.size > 100_000) this.noted.clear(); // bounded: a key is noted again on its next use
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
