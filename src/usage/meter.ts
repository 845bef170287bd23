// Counting usage without a database write on any request's path: increments are summed in memory and
// flushed in one statement about once a second, and on shutdown. A crash loses at most that second.
// Flushes are numbered per meter and sent one after the other; a failed flush is retried with the same
// number, which the database keeps as the meter's last (migration 0008), so an uncertain outcome (a
// connection lost after commit) never counts twice.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { type Clock, DAY_MS, utcDay } from '../lib/clock.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { type Increment, usageStore } from './store.ts';

const FLUSH_MS = 1000;

const keyOf = (i: Omit<Increment, 'count'>) => `${i.projectId}|${i.day}|${i.capability}|${i.metric}`;

export class Meter {
  private buffer = new Map<string, Increment>();
  /** this meter's id in usage_meters: one per process */
  readonly id = randomUUID();
  /** the number of the last flush formed */
  private flushes = 0;
  /** a flush that failed, kept with its number until it lands */
  private unsent: { number: number; increments: Increment[] } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private landed = 0;
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly log: Logger;
  /** today's UTC day as text, remade only when the day changes (counting is on every request's path) */
  private today = { number: -1, text: '' };

  private readonly metrics: Pick<Metrics, 'usageFlushFailures'> | undefined;
  /** when (performance.now) the oldest count not in the database was made: of the buffer, of the unsent */
  private since = { buffer: 0, unsent: 0 };

  constructor(deps: { db: Db; clock: Clock; log: Logger; metrics?: Pick<Metrics, 'usageFlushFailures'> }) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.log = deps.log;
    this.metrics = deps.metrics;
  }

  /** Seconds the oldest count not yet in the database has waited (0 when every count landed). */
  flushLagSeconds(): number {
    const oldest = this.unsent ? this.since.unsent : this.buffer.size > 0 ? this.since.buffer : undefined;
    return oldest === undefined ? 0 : (performance.now() - oldest) / 1000;
  }

  count(projectId: string, capability: string, metric: string, n = 1): void {
    if (this.buffer.size === 0) this.since.buffer = performance.now();
    const increment = { projectId, day: this.dayOf(this.clock.now()), capability, metric, count: n };
    const key = keyOf(increment);
    const existing = this.buffer.get(key);
    if (existing) existing.count += n;
    else this.buffer.set(key, increment);
  }

  /** The UTC day of a time as text (YYYY-MM-DD), remade only when the day changes. */
  dayOf(time: Date): string {
    const number = Math.floor(time.getTime() / DAY_MS);
    if (number !== this.today.number) this.today = { number, text: utcDay(time) };
    return this.today.text;
  }

  /**
   * A read of flushed counts, made again if a flush landed meanwhile: a landing moves counts from
   * pending to the database at once, so a read from before it, added to pending after it, would miss
   * them. Add pending counts to it before awaiting anything else.
   */
  async readFlushed<T>(read: () => Promise<T>): Promise<T> {
    for (;;) {
      const flushes = this.landed;
      const value = await read();
      if (this.landed === flushes) return value;
    }
  }

  /** Counted here but not yet in the database. */
  pending(projectId: string): Increment[] {
    const all = [...this.buffer.values(), ...(this.unsent?.increments ?? [])];
    return all.filter((i) => i.projectId === projectId);
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (!this.unsent && this.buffer.size > 0) {
        this.unsent = { number: ++this.flushes, increments: [...this.buffer.values()] };
        this.since.unsent = this.since.buffer;
        this.buffer = new Map();
      }
      if (!this.unsent) return;
      try {
        await usageStore(this.db).add(this.id, this.unsent.number, this.unsent.increments);
        this.unsent = undefined;
        this.landed++;
      } catch (error) {
        this.metrics?.usageFlushFailures.inc();
        this.log.warn({ err: error }, 'usage flush failed; retrying with the same flush number');
      }
    });
    return this.flushing;
  }

  /** Stops the timer and flushes what is left (retrying a few times: this is the last chance). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    for (let attempt = 0; attempt < 5; attempt++) {
      await this.flush();
      if (!this.unsent && this.buffer.size === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    this.log.error(
      { lost: this.buffer.size + (this.unsent?.increments.length ?? 0) },
      'usage counts could not be flushed at shutdown',
    );
  }
}
