// Usage recorded the way a busy service can afford: record() only queues (an id and a time are given to the
// record then, so that every retry of it is the same record), and batches go out by size or by time, each
// retried with its ids until the platform has it: it counts a record once however often it arrives. A
// batch refused for some of its records sends the rest again and reports those. close() sends what is left.
import { PlatformError } from './errors.ts';
import type { Transport } from './transport.ts';

export interface UsageInput {
  projectId: string;
  /** the metric's bare name, as the manifest declares it: messages_sent */
  metric: string;
  /** default 1 */
  value?: number;
  /** when it happened (default now): it counts on that UTC day */
  time?: Date | string;
  /** the record's own id, when the caller has one (a message id): unique for 35 days; default a new UUID */
  id?: string;
}

export interface RecorderOptions {
  /** records a batch takes at most (default 500; at most 1,000) */
  batchSize?: number;
  /** how long a record waits for its batch at most (default 1,000 ms) */
  flushIntervalMs?: number;
  /** records held while the platform does not answer (default 100,000): past it, record() throws */
  maxBuffered?: number;
  /** a record the platform refused (it is dropped), or a batch that failed for now (it is sent again) */
  onError?: (error: PlatformError, records: UsageRecord[]) => void;
}

export interface UsageRecord {
  id: string;
  projectId: string;
  metric: string;
  value: number;
  time: string;
}

const RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;

export class UsageRecorder {
  readonly #transport: Transport;
  readonly #batchSize: number;
  readonly #maxBuffered: number;
  readonly #onError: NonNullable<RecorderOptions['onError']>;
  #buffer: UsageRecord[] = [];
  #sending: Promise<void> | undefined;
  #closed = false;
  /** set when close() stopped waiting: what is left is not tried again */
  #abandoned = false;
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(transport: Transport, options: RecorderOptions = {}) {
    this.#transport = transport;
    this.#batchSize = Math.min(1000, Math.max(1, options.batchSize ?? 500));
    this.#maxBuffered = options.maxBuffered ?? 100_000;
    this.#onError = options.onError ?? (() => {});
    this.#timer = setInterval(() => void this.flush(), options.flushIntervalMs ?? 1000);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** Ids made here: this recorder's random prefix and a counter, unique without a UUID per record. */
  readonly #idPrefix = `${crypto.randomUUID()}-`;
  #made = 0;
  #nextId = () => `${this.#idPrefix}${(this.#made++).toString(36)}`;
  /** Now, to the second (a record counts on its UTC day): one string a second, not one a record. */
  #second = 0;
  #secondText = '';
  #now(): string {
    const second = Math.floor(Date.now() / 1000);
    if (second !== this.#second) {
      this.#second = second;
      this.#secondText = new Date(second * 1000).toISOString();
    }
    return this.#secondText;
  }

  /** Queues a record; its id (the one given, or a new one). */
  record(input: UsageInput): string {
    if (this.#closed) throw new Error('the usage recorder is closed');
    if (this.#buffer.length >= this.#maxBuffered)
      throw new Error(`${this.#maxBuffered} usage records wait for the platform already`);
    const id = input.id ?? this.#nextId();
    const time = input.time === undefined ? this.#now() : new Date(input.time).toISOString();
    this.#buffer.push({
      id,
      projectId: input.projectId,
      metric: input.metric,
      value: input.value ?? 1,
      time,
    });
    if (this.#buffer.length >= this.#batchSize && !this.#sending) void this.flush();
    return id;
  }

  /** How many records wait to be sent. */
  get pending(): number {
    return this.#buffer.length;
  }

  /** Sends everything queued so far; resolves once the platform has it all. */
  flush(): Promise<void> {
    this.#sending ??= this.#drain().finally(() => {
      this.#sending = undefined;
    });
    return this.#sending;
  }

  /**
   * Stops taking records and sends what is left, waiting at most `timeoutMs` (default 10 s) for the
   * platform: how many records could not be sent by then (0 when all were).
   */
  async close(timeoutMs = 10_000): Promise<number> {
    this.#closed = true;
    clearInterval(this.#timer);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([this.flush(), late]);
    clearTimeout(timer);
    this.#abandoned = this.#buffer.length > 0;
    return this.#buffer.length;
  }

  async #drain() {
    while (this.#buffer.length > 0 && !this.#abandoned) {
      const batch = this.#buffer.slice(0, this.#batchSize);
      await this.#send(batch);
      this.#buffer.splice(0, batch.length);
    }
  }

  /** One batch, until the platform has it (or has refused the records it cannot take). */
  async #send(batch: UsageRecord[]) {
    let records = batch;
    for (let attempt = 0; records.length > 0 && !this.#abandoned; attempt++) {
      try {
        await this.#transport.call({
          method: 'POST',
          path: '/capability/v1/usage',
          body: { records },
          idempotencyKey: false,
        });
        return;
      } catch (error) {
        if (!(error instanceof PlatformError)) throw error;
        if (error.status === 400) {
          const refused = new Set(
            error.errors
              .map((e) => Number(/^\/records\/(\d+)/.exec(e.pointer ?? '')?.[1]))
              .filter(Number.isInteger),
          );
          if (refused.size === 0) return this.#onError(error, records); // the batch as a whole: nothing to retry
          this.#onError(
            error,
            records.filter((_, i) => refused.has(i)),
          );
          records = records.filter((_, i) => !refused.has(i));
          continue;
        }
        this.#onError(error, records);
        await new Promise((resolve) => {
          const wait = setTimeout(resolve, Math.min(MAX_RETRY_MS, RETRY_MS * 2 ** attempt));
          (wait as { unref?: () => void }).unref?.(); // a process that ends need not wait for a retry
        });
      }
    }
  }
}
