// Daily limits per project, capability and metric: the configured defaults, overridden per project. A
// counted operation that would pass its limit for the current UTC day is refused (429) before it runs,
// and never admitted past the limit, in one process or many:
//
// - A process admits only from an allowance it reserved in the database, in blocks, by a conditional
//   update that never takes the day's reservations past the limit (usageStore.reserve, migration 0009).
//   Admitting from the block is a decrement in memory: no write per request, and no await between the
//   check and the take, so concurrent requests cannot both take the last unit.
// - A block is at most 1/16 of what remains of the day (and at most 1,000), so blocks shrink to one unit
//   near the limit; an allowance unused for 2 s is handed back, and so is every allowance at shutdown.
// - The cost is under-admission: while other processes hold unused blocks, a process may refuse although
//   the day has room, by at most those blocks, for at most 2 s after their last use. A process that dies
//   loses its unused block for the rest of the day.
// - During a database outage a process goes on from the last reservation it knew: it admits up to what
//   remained then, so an outage can let each process admit up to that remainder unreserved.

import { type Db, isUnavailable } from '../db/database.ts';
import type { Clock } from '../lib/clock.ts';
import { PlatformError } from '../lib/errors.ts';
import { RefreshAhead } from '../lib/refresh-ahead.ts';
import type { Meter } from './meter.ts';
import { type QuotaKey, usageStore } from './store.ts';

const LIMITS_TTL_MS = 5000;
/** an allowance unused this long goes back to the day, for other processes */
const IDLE_MS = 2000;
/** how long a spent day is believed before the database is asked again (a raised limit shows then) */
const SPENT_TTL_MS = 1000;
const BLOCK_MAX = 1000;
/** the longest a capability's reservation lives (metering's ttlSeconds ≤ 900), and a margin */
const RESERVATION_LIFE_MS = 16 * 60_000;
const BLOCK_SHARE = 16;

export interface DailyLimit {
  capability: string;
  metric: string;
  dailyLimit: number;
}

/** A project's daily limits, by `capability/metric`. */
export type DailyLimitsOf = (projectId: string) => Promise<Map<string, number>>;

/**
 * The 429 of a spent daily limit, with the RateLimit headers (draft 8) and when it resets (00:00 UTC);
 * Core's limits and the capabilities' reservations answer it alike.
 */
export function limitRefusal(capability: string, metric: string, limit: number, now: Date): PlatformError {
  const reset = Math.ceil(
    (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000,
  );
  const policy = `"${capability}.${metric}"`;
  return new PlatformError(
    'USAGE_LIMIT_EXCEEDED',
    `the daily limit of ${limit} for ${capability}/${metric} is reached; it resets at 00:00 UTC`,
    {
      headers: {
        'retry-after': String(reset),
        'ratelimit-policy': `${policy};q=${limit};w=86400`,
        ratelimit: `${policy};r=0;t=${reset}`,
      },
    },
  );
}

/** What this process holds of one project's allowance of one metric today. */
interface Allowance {
  key: QuotaKey;
  /** the limit it was reserved under */
  limit: number;
  /** reserved by this process and not yet admitted */
  left: number;
  /** the day's reservations as last known (by every process) */
  reserved: number;
  spentAt: number | undefined;
  reserving: Promise<void> | undefined;
  usedAt: number;
  /** dropped by a change of the limits: what comes back to it goes straight back to its day */
  forgotten?: boolean;
  /** whether the database has answered one of its reservations (what it knows of the day is real) */
  known?: boolean;
  /** units admitted during an outage, never reserved in the database: never handed back to it */
  unbacked: number;
}

/**
 * `defaults`: the limits every project has unless it has its own (the capabilities' defaults, then the
 * installation's PLATFORM_DAILY_LIMITS over them), asked anew each time a project's limits are read.
 */
export function usageLimits(deps: {
  db: Db;
  clock: Clock;
  meter: Meter;
  defaults: () => DailyLimit[];
  /** whether this process's settings lease is held: without it, limits are read anew (settings/lease.ts) */
  bound: () => boolean;
}) {
  const allowances = new Map<string, Allowance>();
  // When each project's limits last changed (and when all of them may have, this process's start
  // included): what a reservation taken before then gives back goes to its day, not to an allowance
  // under the new limit, which would admit it again past that limit.
  const changedAt = new Map<string, number>();
  let allChangedAt = 0;
  const changedWithin = (projectId: string, ms: number) =>
    Math.max(changedAt.get(projectId) ?? 0, allChangedAt) > Date.now() - ms;
  const store = usageStore(deps.db);
  let sweeper: NodeJS.Timeout | undefined;
  const defaults = () => new Map(deps.defaults().map((l) => [`${l.capability}/${l.metric}`, l.dailyLimit]));
  /** each project's limits, believed for 5 s, refreshed ahead while in use (refresh-ahead.ts) */
  async function loadMany(projectIds: string[]) {
    const limits = new Map(projectIds.map((id) => [id, defaults()]));
    for (const row of await store.limits(projectIds))
      limits.get(row.project_id)?.set(`${row.capability}/${row.metric}`, row.daily_limit);
    return limits;
  }
  const limitsCache = new RefreshAhead<string, Map<string, number>>({
    max: 100_000,
    ttlMs: LIMITS_TTL_MS,
    loadMany,
  });

  async function limitsOf(projectId: string): Promise<Map<string, number>> {
    try {
      if (!deps.bound()) return (await loadMany([projectId])).get(projectId) as Map<string, number>;
      return await limitsCache.get(projectId);
    } catch (error) {
      if (!isUnavailable(error)) throw error;
      // An outage: the limits last known (or the defaults), asked again in 5 s.
      const known = limitsCache.last(projectId)?.value ?? defaults();
      limitsCache.set(projectId, known);
      return known;
    }
  }

  /** This process's allowance of today under `limit` (a new day, or a changed limit, starts afresh). */
  function allowanceOf(projectId: string, capability: string, metric: string, limit: number): Allowance {
    const day = deps.meter.dayOf(deps.clock.now());
    const id = `${projectId}|${capability}|${metric}`;
    let allowance = allowances.get(id);
    if (allowance && (allowance.key.day !== day || allowance.limit !== limit)) {
      if (allowance.key.day === day) void giveBackAll([allowance]);
      allowance = undefined;
    }
    if (!allowance) {
      const key = { projectId, day, capability, metric };
      allowance = {
        key,
        limit,
        left: 0,
        reserved: 0,
        spentAt: undefined,
        reserving: undefined,
        usedAt: 0,
        unbacked: 0,
      };
      allowances.set(id, allowance);
    }
    return allowance;
  }

  /**
   * Reserves a block for the allowance. In an outage a lenient take goes on from the day as last known
   * (never for an allowance the database never answered: it knows nothing of the day); a strict one
   * (a capability's reservation, a gateway route's metric) fails, and the request is a 503.
   */
  async function reserve(allowance: Allowance, n: number, strict: boolean) {
    const { limit } = allowance;
    // Large takes (a reservation of 4,096 tokens) get blocks of several, so they do not each write.
    const most = Math.max(BLOCK_MAX, BLOCK_SHARE * n);
    const block = Math.max(n, Math.min(most, Math.floor((limit - allowance.reserved) / BLOCK_SHARE)));
    let granted: number;
    try {
      const result = await store.reserve(allowance.key, block, limit);
      granted = result.granted;
      allowance.reserved = result.reserved;
      allowance.known = true;
    } catch (error) {
      if (!isUnavailable(error) || strict || !allowance.known) throw error;
      granted = Math.max(0, Math.min(block, limit - allowance.reserved)); // the last count known
      allowance.reserved += granted;
      allowance.unbacked += granted;
    }
    allowance.spentAt = granted > 0 ? undefined : Date.now();
    returnTo(allowance, granted);
  }

  /** Puts n back into an allowance; one a change of limits dropped hands it back to its day at once. */
  function returnTo(allowance: Allowance, n: number) {
    allowance.left += n;
    if (allowance.forgotten) void giveBackAll([allowance]);
  }

  /** Drops allowances (their limits changed) and hands back what they hold. */
  async function drop(these: [string, Allowance][]) {
    for (const [id, allowance] of these) {
      allowances.delete(id);
      allowance.forgotten = true;
    }
    await giveBackAll(these.map(([, allowance]) => allowance));
  }

  /** Takes every unused allowance of `these` back from this process, and hands them to their days at once. */
  async function giveBackAll(these: Allowance[]) {
    const returns = these
      .filter((allowance) => allowance.left > 0)
      .map((allowance) => {
        // What an outage admitted was never reserved: handing it back would undercount the day.
        const unused = Math.max(0, allowance.left - allowance.unbacked);
        allowance.reserved -= allowance.left;
        allowance.left = 0;
        allowance.unbacked = 0;
        return { key: allowance.key, unused };
      })
      .filter((back) => back.unused > 0);
    await store.giveBack(returns).catch(() => {}); // in an outage it stays reserved: fewer admitted
  }

  const spent = (allowance: Allowance) =>
    allowance.spentAt !== undefined && Date.now() - allowance.spentAt < SPENT_TTL_MS;

  const refusal = (allowance: Allowance) =>
    limitRefusal(allowance.key.capability, allowance.key.metric, allowance.limit, deps.clock.now());

  function takeFrom(allowance: Allowance, n: number): boolean {
    if (allowance.left < n) return false;
    allowance.left -= n;
    allowance.usedAt = Date.now();
    return true;
  }

  return {
    /** The project's limits, by `capability/metric` (5 s old at most). */
    limitsOf: limitsOf as DailyLimitsOf,

    /**
     * Takes n from today's allowance, or throws USAGE_LIMIT_EXCEEDED. Returns a function that gives the n
     * back (for an operation that ends up not happening). `strict`: never from an outage's guess.
     */
    async take(
      projectId: string,
      capability: string,
      metric: string,
      n = 1,
      options: { strict?: boolean } = {},
    ): Promise<() => void> {
      for (;;) {
        const limit = (await limitsOf(projectId)).get(`${capability}/${metric}`);
        if (limit === undefined) return () => {};
        const allowance = allowanceOf(projectId, capability, metric, limit);
        if (takeFrom(allowance, n)) return () => returnTo(allowance, n);
        if (spent(allowance)) throw refusal(allowance);
        allowance.reserving ??= reserve(allowance, n, options.strict === true).finally(() => {
          allowance.reserving = undefined;
        });
        await allowance.reserving;
      }
    },

    /**
     * The hot path: takes n at once when the caches can decide (true: taken, or no limit; false: the day
     * is spent), undefined when take must be called.
     */
    tryTake(projectId: string, capability: string, metric: string, n = 1): boolean | undefined {
      const limits = deps.bound() ? limitsCache.fresh(projectId) : undefined;
      if (!limits) return undefined;
      const limit = limits.get(`${capability}/${metric}`);
      if (limit === undefined) return true;
      const allowance = allowanceOf(projectId, capability, metric, limit);
      if (takeFrom(allowance, n)) return true;
      return spent(allowance) ? false : undefined;
    },

    /**
     * What remains of the day for the project's metric, as this process sees it: the limit, less what
     * every process has reserved, plus what this one holds unused (undefined without a limit).
     */
    remaining(projectId: string, capability: string, metric: string): number | undefined {
      const limit = limitsCache.last(projectId)?.value.get(`${capability}/${metric}`);
      if (limit === undefined) return undefined;
      const allowance = allowanceOf(projectId, capability, metric, limit);
      return Math.max(0, limit - allowance.reserved + allowance.left);
    },

    /**
     * Takes back into this process's allowance what was taken and then not used (a reservation released,
     * or committed for less): it is still reserved in the database, so it needs no write, and goes back to
     * the day with the rest of the allowance once unused for 2 s. Of another day, or taken before the
     * project's limits last changed (as far as this process knows), it goes back to its day at once.
     */
    async credit(projectId: string, capability: string, metric: string, day: string, n: number) {
      const limit = (await limitsOf(projectId)).get(`${capability}/${metric}`);
      if (limit === undefined || n <= 0) return;
      if (day !== deps.meter.dayOf(deps.clock.now()) || changedWithin(projectId, RESERVATION_LIFE_MS)) {
        await store.giveBack([{ key: { projectId, day, capability, metric }, unused: n }]);
        return;
      }
      const allowance = allowanceOf(projectId, capability, metric, limit);
      allowance.left += n;
      allowance.spentAt = undefined;
      allowance.usedAt = Date.now();
    },

    /**
     * A project's limits changed: forgets them and every allowance this process holds under them (handed
     * back to their days before this resolves), so the next take reads the new limit and reserves under it.
     */
    async forget(projectId: string) {
      limitsCache.forget(projectId);
      changedAt.set(projectId, Date.now());
      await drop([...allowances].filter(([id]) => id.startsWith(`${projectId}|`)));
    },

    /** Every limit may have changed (the last change at `lastChangeMs`): forgets them all and every allowance. */
    async forgetAll(lastChangeMs: number) {
      limitsCache.clear();
      allChangedAt = lastChangeMs;
      changedAt.clear();
      await drop([...allowances]);
    },

    /** Forgets that the day looked spent, so that the next take asks the database (room was given back). */
    forgetSpent(projectId: string, capability: string, metric: string) {
      const allowance = allowances.get(`${projectId}|${capability}|${metric}`);
      if (allowance) allowance.spentAt = undefined;
    },

    /** The refusal of a spent allowance, for tryTake's false. */
    refusal(projectId: string, capability: string, metric: string): PlatformError {
      const limit = limitsCache.last(projectId)?.value.get(`${capability}/${metric}`) ?? 0;
      return refusal(allowanceOf(projectId, capability, metric, limit));
    },

    /** Every limit that applies to the project, sorted by capability and metric. */
    async effective(projectId: string): Promise<DailyLimit[]> {
      return [...(await limitsOf(projectId))]
        .map(([key, dailyLimit]) => {
          const [capability = '', metric = ''] = key.split('/');
          return { capability, metric, dailyLimit };
        })
        .sort((a, b) => a.capability.localeCompare(b.capability) || a.metric.localeCompare(b.metric));
    },

    /**
     * Hands back, each second and in one statement, what lay unused for 2 s, and forgets the days gone by;
     * refreshes the limits of the projects in use.
     */
    start() {
      limitsCache.start();
      sweeper ??= setInterval(() => {
        const day = deps.meter.dayOf(deps.clock.now());
        const now = Date.now();
        const idle: Allowance[] = [];
        for (const [projectId, at] of changedAt)
          if (at < now - RESERVATION_LIFE_MS) changedAt.delete(projectId);
        for (const [id, allowance] of allowances) {
          if (allowance.key.day !== day) allowances.delete(id);
          else if (allowance.left > 0 && now - allowance.usedAt > IDLE_MS) idle.push(allowance);
        }
        void giveBackAll(idle);
      }, 1000);
      sweeper.unref();
    },

    /** Hands back every unused allowance (a stopping process), in one statement. */
    async stop() {
      limitsCache.stop();
      clearInterval(sweeper);
      sweeper = undefined;
      await giveBackAll([...allowances.values()]);
    },
  };
}

export type UsageLimits = ReturnType<typeof usageLimits>;
