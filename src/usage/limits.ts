// Daily limits per project, capability and metric: the configured defaults, overridden per project.
// A counted operation that would pass its limit for the current UTC day is refused (429) before it runs.
// The count used is the database's (re-read at most once a second, and after each flush of this
// process lands) plus what this process has not yet flushed: exact within one process, and across
// processes within about a second of traffic. While a flush is on its way (or after one whose outcome
// was lost, until its retry lands), a read may already see it while it is still pending here, counting
// it twice: an error toward refusing, never toward passing the limit.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/database.ts';
import { PlatformError } from '../errors.ts';
import type { Meter } from './meter.ts';
import { usageStore } from './store.ts';

const LIMITS_TTL_MS = 5000;
const COUNT_TTL_MS = 1000;

const countKey = (projectId: string, day: string, capability: string, metric: string) =>
  `${projectId}|${day}|${capability}|${metric}`;

/** A project's count of one metric on one day, as the database had it when read. */
interface CachedCount {
  at: number;
  count: number;
  /** this process's landed flushes when it was read */
  flushes: number;
}

export interface DailyLimit {
  capability: string;
  metric: string;
  dailyLimit: number;
}

export function usageLimits(deps: { db: Db; clock: Clock; meter: Meter; defaults: DailyLimit[] }) {
  const limitsCache = new Map<string, { at: number; limits: Map<string, number> }>();
  const countCache = new Map<string, CachedCount>();
  /**
   * The use of a day from the cached count and this process's pending counts; undefined unless the cached
   * count holds: fresh, and read since this process's last flush landed.
   */
  function usedFromCache(projectId: string, day: string, capability: string, metric: string, now: number) {
    const cached = countCache.get(countKey(projectId, day, capability, metric));
    if (!cached || now - cached.at >= COUNT_TTL_MS || cached.flushes !== deps.meter.flushesLanded) return;
    return cached.count + deps.meter.pendingCount(projectId, day, capability, metric);
  }

  async function limitsOf(db: Db, projectId: string): Promise<Map<string, number>> {
    const now = Date.now();
    const cached = limitsCache.get(projectId);
    if (cached && now - cached.at < LIMITS_TTL_MS) return cached.limits;
    const limits = new Map(deps.defaults.map((l) => [`${l.capability}/${l.metric}`, l.dailyLimit]));
    for (const row of await usageStore(db).limits(projectId))
      limits.set(`${row.capability}/${row.metric}`, row.daily_limit);
    limitsCache.set(projectId, { at: now, limits });
    return limits;
  }

  async function usedToday(db: Db, projectId: string, day: string, capability: string, metric: string) {
    const now = Date.now();
    const used = usedFromCache(projectId, day, capability, metric, now);
    if (used !== undefined) return used;
    // The database holds what every process flushed; this process's unflushed counts are added to it.
    const read = await deps.meter.readFlushed(() =>
      usageStore(db).countOn(projectId, day, capability, metric),
    );
    countCache.set(countKey(projectId, day, capability, metric), {
      at: now,
      count: read.value,
      flushes: read.flushes,
    });
    return read.value + deps.meter.pendingCount(projectId, day, capability, metric);
  }

  return {
    /**
     * Throws USAGE_LIMIT_EXCEEDED when n more would pass today's limit. Inside a transaction, pass its
     * handle: taking a second pool connection while holding one can starve the pool under load.
     */
    async check(
      projectId: string,
      capability: string,
      metric: string,
      options: { n?: number; db?: Db } = {},
    ) {
      const db = options.db ?? deps.db;
      const limit = (await limitsOf(db, projectId)).get(`${capability}/${metric}`);
      if (limit === undefined) return;
      const now = deps.clock.now();
      const day = deps.meter.dayOf(now);
      const used = await usedToday(db, projectId, day, capability, metric);
      const n = options.n ?? 1;
      if (used + n <= limit) return;
      const reset = Math.ceil(
        (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000,
      );
      const policy = `"${capability}.${metric}"`;
      throw new PlatformError(
        'USAGE_LIMIT_EXCEEDED',
        `the daily limit of ${limit} for ${capability}/${metric} is reached; it resets at 00:00 UTC`,
        {
          headers: {
            'retry-after': String(reset),
            'ratelimit-policy': `${policy};q=${limit};w=86400`,
            ratelimit: `${policy};r=${Math.max(0, limit - used)};t=${reset}`,
          },
        },
      );
    },

    /**
     * Whether the caches alone show room for n more today (or no limit): then check would pass without a
     * database read, and the caller may skip it. False means "call check", not "refused".
     */
    admitsFromCache(projectId: string, capability: string, metric: string, n = 1): boolean {
      const now = Date.now();
      const cached = limitsCache.get(projectId);
      if (!cached || now - cached.at >= LIMITS_TTL_MS) return false;
      const limit = cached.limits.get(`${capability}/${metric}`);
      if (limit === undefined) return true;
      const used = usedFromCache(projectId, deps.meter.dayOf(deps.clock.now()), capability, metric, now);
      return used !== undefined && used + n <= limit;
    },

    /** Every limit that applies to the project, sorted by capability and metric. */
    async effective(projectId: string): Promise<DailyLimit[]> {
      return [...(await limitsOf(deps.db, projectId))]
        .map(([key, dailyLimit]) => {
          const [capability = '', metric = ''] = key.split('/');
          return { capability, metric, dailyLimit };
        })
        .sort((a, b) => a.capability.localeCompare(b.capability) || a.metric.localeCompare(b.metric));
    },
  };
}

export type UsageLimits = ReturnType<typeof usageLimits>;
