// The process's Prometheus metrics (prom-client), one registry per service: what the API, the worker and
// the meter count as they go, and what is read when scraped (the queue, the pool, the database).
// No label names a project, an endpoint or a key: a label's values stay few, whatever the traffic.
// docs/operations.md, Metrics, says what each means; ops/prometheus holds the rules that read them.
import client from 'prom-client';
import { RequestDurations } from './request-durations.ts';

const PREFIX = 'platform_';

/** Request durations: from a cached answer (a fraction of a millisecond) to a slow transaction. */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** A receiver's answer: up to the delivery timeout (15 s by default, at most 10 minutes). */
const ATTEMPT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 600];
/** From an event's creation to its delivery: at once, or after retries spread over hours. */
const LAG_BUCKETS = [
  0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 36_000, 86_400,
];
const RUN_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** The error codes counted as authentication failures, and as limit refusals (by limit). */
const AUTH_CODES = new Set([
  'API_KEY_MISSING',
  'API_KEY_INVALID',
  'API_KEY_REVOKED',
  'API_KEY_EXPIRED',
  'INSUFFICIENT_SCOPE',
]);
const LIMIT_CODES: Record<string, string> = { RATE_LIMITED: 'rate', USAGE_LIMIT_EXCEEDED: 'daily' };

export class Metrics {
  readonly registry = new client.Registry();
  /** false when no listener serves them: the per-request histogram and Node's metrics are not kept */
  readonly enabled: boolean;

  readonly requestDuration = new RequestDurations(
    `${PREFIX}http_request_duration_seconds`,
    'HTTP API requests by route template, method and status code, from arrival to the answer sent',
    REQUEST_BUCKETS,
  );
  readonly idempotency = new client.Counter({
    name: `${PREFIX}idempotency_requests_total`,
    help: 'Writes with an Idempotency-Key by outcome: fresh (ran), replayed, in_progress (409), reused (422)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly soleWrites = new client.Counter({
    name: `${PREFIX}sole_writes_total`,
    help: 'Idempotent writes offered as one statement: committed in one round trip, or missed (not as predicted; they went statement by statement)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly authFailures = new client.Counter({
    name: `${PREFIX}auth_failures_total`,
    help: 'Requests refused by authentication or scope, by error code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  readonly limitRefusals = new client.Counter({
    name: `${PREFIX}limit_refusals_total`,
    help: 'Requests refused by a limit: rate (a key’s request rate) or daily (a project’s daily allowance)',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });
  readonly published = new client.Counter({
    name: `${PREFIX}events_published_total`,
    help: 'Events published (committed)',
    registers: [this.registry],
  });
  readonly attempts = new client.Counter({
    name: `${PREFIX}delivery_attempts_total`,
    help: 'Delivery attempts by outcome: delivered, failed (to be retried), dead (the last attempt failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly attemptDuration = new client.Histogram({
    name: `${PREFIX}delivery_attempt_duration_seconds`,
    help: 'How long a delivery attempt took, from the request sent to the answer (or the timeout)',
    labelNames: ['outcome'] as const,
    buckets: ATTEMPT_BUCKETS,
    registers: [this.registry],
  });
  readonly deliveryLag = new client.Histogram({
    name: `${PREFIX}delivery_lag_seconds`,
    help: 'From an event’s creation to its delivery, for each delivery delivered',
    buckets: LAG_BUCKETS,
    registers: [this.registry],
  });
  readonly throttled = new client.Counter({
    name: `${PREFIX}delivery_throttled_total`,
    help: 'Deliveries a claim pushed to a later slot, to keep their endpoint’s rate limit',
    registers: [this.registry],
  });
  readonly runLength = new client.Histogram({
    name: `${PREFIX}delivery_run_length`,
    help: 'Deliveries per run claimed: 1 unless an ordered lane hands over the run behind its head',
    buckets: RUN_BUCKETS,
    registers: [this.registry],
  });
  readonly recordRetries = new client.Counter({
    name: `${PREFIX}delivery_record_retries_total`,
    help: 'Batches of attempts whose recording failed and is retried (their leases hold meanwhile)',
    registers: [this.registry],
  });
  readonly jobs = new client.Counter({
    name: `${PREFIX}jobs_finished_total`,
    help: 'Background jobs (bulk recovery) run to their end by this process',
    registers: [this.registry],
  });
  readonly usageFlushFailures = new client.Counter({
    name: `${PREFIX}usage_flush_failures_total`,
    help: 'Usage flushes that failed and are retried with the same number',
    registers: [this.registry],
  });
  readonly sharedLimitFallbacks = new client.Counter({
    name: `${PREFIX}rate_limit_fallbacks_total`,
    help: 'Rate-limit decisions taken by this process alone because Redis did not answer',
    registers: [this.registry],
  });

  constructor(options: { enabled: boolean; version: string; commit: string }) {
    this.enabled = options.enabled;
    this.registry.registerMetric(this.requestDuration as unknown as client.Metric);
    new client.Gauge({
      name: `${PREFIX}build_info`,
      help: 'Always 1; the version and commit this process runs',
      labelNames: ['version', 'commit'] as const,
      registers: [this.registry],
    }).set({ version: options.version, commit: options.commit }, 1);
    if (options.enabled) {
      client.collectDefaultMetrics({ register: this.registry });
      // Gauges named as counters (promtool check metrics says so); the same figures are kept by type in
      // nodejs_active_handles, nodejs_active_requests and nodejs_active_resources.
      for (const name of MISNAMED_DEFAULTS) this.registry.removeSingleMetric(name);
    }
    // Every series a rule reads exists from the start, at 0: rate() and increase() see the first one.
    for (const outcome of ['fresh', 'replayed', 'in_progress', 'reused'])
      this.idempotency.inc({ outcome }, 0);
    for (const result of ['committed', 'missed']) this.soleWrites.inc({ result }, 0);
    for (const code of AUTH_CODES) this.authFailures.inc({ code }, 0);
    for (const limit of Object.values(LIMIT_CODES)) this.limitRefusals.inc({ limit }, 0);
    for (const outcome of ['delivered', 'failed', 'dead']) this.attempts.inc({ outcome }, 0);
  }

  /** A refusal answered with a problem: counted when it is an authentication failure or a limit's. */
  problem(code: string): void {
    if (AUTH_CODES.has(code)) this.authFailures.inc({ code });
    const limit = LIMIT_CODES[code];
    if (limit) this.limitRefusals.inc({ limit });
  }

  /** A gauge read when scraped; undefined (nothing read yet) leaves it as it was, 0 at first. */
  gauge(name: string, help: string, read: () => number | undefined | Promise<number | undefined>): void {
    new client.Gauge({
      name: `${PREFIX}${name}`,
      help,
      registers: [this.registry],
      async collect() {
        const value = await read();
        if (value !== undefined) this.set(value);
      },
    });
  }

  /** A gauge with one label, each value's figure read when scraped. */
  labelledGauge(
    name: string,
    help: string,
    label: string,
    read: () => Promise<Record<string, number> | undefined>,
  ) {
    new client.Gauge({
      name: `${PREFIX}${name}`,
      help,
      labelNames: [label],
      registers: [this.registry],
      async collect() {
        const values = await read();
        this.reset();
        for (const [value, n] of Object.entries(values ?? {})) this.set({ [label]: value }, n);
      },
    });
  }

  exposition(): Promise<string> {
    return this.registry.metrics();
  }
}
