// Reporting an instance's circuit breakers to the platform (PUT /capability/v1/breakers), every 10 s: a
// report lives 30 s there, so a stopped instance stops counting on its own. Between those reports a
// change is reported as soon as it is seen: the states are read locally (a property read, no request)
// every 250 ms, so health names an open breaker within about a quarter of a second, not up to 10 s late.
// A breaker is anything with a state: opossum's CircuitBreaker as it is (its `opened` and `halfOpen`), or
// a function.
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
  /** how often the states are read to report a change at once (default 250 ms; 0: only every interval) */
  watchMs?: number;
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

const statesOf = (providers: { state: BreakerState }[]) => providers.map((p) => p.state).join();

export class BreakerReporter {
  readonly #transport: Transport;
  readonly #options: BreakerReporterOptions;
  readonly instance: string;
  #timers: ReturnType<typeof setInterval>[] = [];
  /** the states last sent, reported or not: a report that failed is not sent again until the interval */
  #sent: string | undefined;
  #sending = false;

  constructor(transport: Transport, options: BreakerReporterOptions) {
    this.#transport = transport;
    this.#options = options;
    this.instance = options.instance ?? `instance-${crypto.randomUUID().slice(0, 8)}`;
  }

  /** Reports now; resolves once the platform has it. */
  async report(): Promise<void> {
    const providers = this.#providers();
    this.#sent = statesOf(providers);
    await this.#transport.call({
      method: 'PUT',
      path: '/capability/v1/breakers',
      body: { instance: this.instance, providers },
    });
  }

  /** Reports now, then every interval and whenever a state changes, until stop(). */
  start(): this {
    if (this.#timers.length > 0) return this;
    // One report at a time, so that they reach the platform in the order their states were read.
    const run = () => {
      if (this.#sending) return;
      this.#sending = true;
      void this.report()
        .catch((error) => this.#options.onError?.(error))
        .finally(() => {
          this.#sending = false;
        });
    };
    const changed = () => {
      let states: string;
      try {
        states = statesOf(this.#providers());
      } catch {
        return; // a breaker function that throws is reported through onError by the interval's report
      }
      if (states !== this.#sent) run();
    };
    run();
    this.#timers.push(setInterval(run, this.#options.intervalMs ?? 10_000));
    const watchMs = this.#options.watchMs ?? 250;
    if (watchMs > 0) this.#timers.push(setInterval(changed, watchMs));
    for (const timer of this.#timers) (timer as { unref?: () => void }).unref?.();
    return this;
  }

  stop() {
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
  }

  #providers() {
    return Object.entries(this.#options.breakers).map(([provider, breaker]) => ({
      provider,
      state: stateOf(breaker),
    }));
  }
}
