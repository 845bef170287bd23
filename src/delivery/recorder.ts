// The worker's attempts, recorded in batches (recordAttempts in store.ts): a batch goes when it reaches
// FLUSH_AT, or FLUSH_AFTER_MS after its first attempt ended, or when the worker asks (a run of an ordered
// lane is recorded as soon as it ends, because its lane moves on only once it is). One flush at a time;
// a failed one is retried a second later with what came meanwhile, the leases holding all the while.
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import { type Completion, recordAttempts } from '../delivery-store/record.ts';
import type { Metrics } from '../metrics/metrics.ts';

const FLUSH_AT = 200;
const FLUSH_AFTER_MS = 20;
const RETRY_MS = 1000;

export class AttemptRecorder {
  private readonly deps: {
    db: Database;
    disableAfterDead: number;
    log: Logger;
    metrics?: Pick<Metrics, 'recordRetries'>;
    /** called with each batch once it is recorded */
    recorded: (batch: Completion[]) => void;
  };
  private completions: Completion[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(deps: AttemptRecorder['deps']) {
    this.deps = deps;
  }

  add(completion: Completion) {
    this.completions.push(completion);
    if (this.completions.length >= FLUSH_AT) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_AFTER_MS);
  }

  /** Records what is buffered now (after any flush under way); resolves once it is recorded or retried. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = this.flushing.then(async () => {
      const batch = this.completions;
      if (batch.length === 0) return;
      this.completions = [];
      try {
        await recordAttempts(this.deps.db, batch, this.deps.disableAfterDead);
        this.deps.recorded(batch);
      } catch (error) {
        this.deps.metrics?.recordRetries.inc();
        this.deps.log.warn({ err: error, attempts: batch.length }, 'recording attempts failed; retrying');
        this.completions = batch.concat(this.completions);
        this.timer ??= setTimeout(() => void this.flush(), RETRY_MS);
      }
    });
    return this.flushing;
  }
}
