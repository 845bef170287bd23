// The gauges read when Prometheus scrapes: the database (reachable, the pool), the delivery queue, and
// what this process holds (the worker's sends, the usage not yet flushed, the shared limits' state).
import type { Database } from '../db/database.ts';
import { queueFigures } from '../delivery-store/stats.ts';
import type { Metrics } from './metrics.ts';

const PING_TIMEOUT_MS = 1000;
/** Scrapes within this time (several Prometheus servers, say) share one read of the queue. */
const QUEUE_MAX_AGE_MS = 1000;

export interface ScrapedSources {
  db: Database;
  /** seconds the oldest usage count not yet in the database has waited */
  usageFlushLag: () => number;
  /** the worker's runs in flight and its limit, in a process that runs one */
  worker?: { inUse: () => number; limit: number };
  /** whether Redis answers the shared request limits, when REDIS_URL is set */
  sharedLimits?: () => boolean;
}

export function registerScraped(metrics: Metrics, sources: ScrapedSources) {
  const { db } = sources;
  const queue = lastGood(QUEUE_MAX_AGE_MS, () => queueFigures(db));

  // The pool first: a scrape reads gauges in this order, before its own queries take a connection.
  const pool = db.pool;
  metrics.gauge(
    'db_pool_connections',
    'Connections this process’s pool holds (idle and in use)',
    () => pool.totalCount,
  );
  metrics.gauge(
    'db_pool_idle_connections',
    'Connections of this process’s pool that are idle',
    () => pool.idleCount,
  );
  metrics.gauge(
    'db_pool_waiting_clients',
    'Queries of this process waiting for a connection of its pool',
    () => pool.waitingCount,
  );
  metrics.gauge(
    'db_pool_max_connections',
    'The most connections this process’s pool opens',
    () => pool.options.max,
  );

  metrics.gauge(
    'database_up',
    '1 when the database answered a ping within a second at the scrape',
    async () => ((await db.ping(PING_TIMEOUT_MS)) ? 1 : 0),
  );
  metrics.labelledGauge(
    'queue_deliveries',
    'Pending deliveries by what they wait for: due (for a worker), in_flight (leased), scheduled (a retry or a rate slot), paused (their endpoint), ordered (the delivery before them in their lane)',
    'state',
    async () => (await queue())?.deliveries,
  );
  metrics.gauge(
    'queue_oldest_due_age_seconds',
    'How long the oldest due delivery has waited for a worker (0 when none is due)',
    async () => (await queue())?.oldestDueAgeSeconds,
  );
  metrics.gauge(
    'workers_reporting',
    'Delivery worker processes that reported in within the last 60 s',
    async () => (await queue())?.workers,
  );

  metrics.gauge(
    'usage_flush_lag_seconds',
    'How long the oldest usage count of this process has waited to be flushed to the database (0: none waits)',
    sources.usageFlushLag,
  );

  const { worker, sharedLimits } = sources;
  if (worker) {
    metrics.gauge('worker_concurrency_in_use', 'Runs of deliveries this worker is sending', worker.inUse);
    metrics.gauge('worker_concurrency_limit', 'The most runs this worker sends at once', () => worker.limit);
  }
  if (sharedLimits) {
    metrics.gauge(
      'rate_limit_shared_up',
      '1 while Redis answers the shared request limits; 0 while this process limits requests alone',
      () => (sharedLimits() ? 1 : 0),
    );
  }
}

/**
 * A read made at most once per maxAgeMs (callers within that time share it); when it fails, the last
 * figures it gave (or undefined): a scrape never fails because the database does.
 */
function lastGood<T>(maxAgeMs: number, read: () => Promise<T>): () => Promise<T | undefined> {
  let last: T | undefined;
  let readAt = 0;
  let reading: Promise<T | undefined> | undefined;
  return () => {
    if (Date.now() - readAt < maxAgeMs) return Promise.resolve(last);
    reading ??= read()
      .then(
        (value) => {
          last = value;
          readAt = Date.now();
          return value;
        },
        () => last,
      )
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
}
