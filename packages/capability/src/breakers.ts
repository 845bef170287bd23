// Reporting an instance's circuit breakers to the platform (PUT /capability/v1/breakers), every 10 s: a
// report lives 30 s there, so a stopped instance stops counting on its own. A breaker is anything with a
// state: opossum's CircuitBreaker as it is (its `opened` and `halfOpen`), or a function.
import type { Transport } from './transport.ts';

export type BreakerState = 'closed' | 'open' | 'half_open';

/** opossum's CircuitBreaker, or any object with its two flags; or a function answering the state. */
export type BreakerLike = { opened: boolean; halfOpen: boolean } | (() => BreakerState);

export interface BreakerReporterOptions {
  /** this instance's name (a host or pod name; default a random one) */
  instance?: string;
  /** the declared provider each breaker guards */
  breakers: Record<string, BreakerLike>;
  /** how often (default 10,000 ms; the platform forgets a report after 30 s) */
  intervalMs?: number;
  /** a report that failed (the next one goes on schedule) */
  onError?: (error: unknown) => void;
}

const stateOf = (breaker: BreakerLike): BreakerState =>
  typeof breaker === 'function'
    ? breaker()
    : breaker.opened
      ? 'open'
      : breaker.halfOpen
        ? 'half_open'
        : 'closed';

export class BreakerReporter {
  readonly #transport: Transport;
  readonly #options: BreakerReporterOptions;
  readonly instance: string;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(transport: Transport, options: BreakerReporterOptions) {
    this.#transport = transport;
    this.#options = options;
    this.instance = options.instance ?? `instance-${crypto.randomUUID().slice(0, 8)}`;
  }

  /** Reports now; resolves once the platform has it. */
  report(): Promise<void> {
    const providers = Object.entries(this.#options.breakers).map(([provider, breaker]) => ({
      provider,
      state: stateOf(breaker),
    }));
    return this.#transport.call({
      method: 'PUT',
      path: '/capability/v1/breakers',
      body: { instance: this.instance, providers },
    });
  }

  /** Reports now and then every interval, until stop(). */
  start(): this {
    const run = () => this.report().catch((error) => this.#options.onError?.(error));
    void run();
    this.#timer ??= setInterval(run, this.#options.intervalMs ?? 10_000);
    (this.#timer as { unref?: () => void }).unref?.();
    return this;
  }

  stop() {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
