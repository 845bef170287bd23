// GET /api/health: every field from real sources: the database (reachability, migrations), the queue
// (filled by the delivery module), the capability registry (breakers) and the configuration.

import type { Database } from '../db/database.ts';
import { appliedMigrations, MIGRATIONS } from '../db/migrate.ts';
import { historyRetention } from '../delivery-store/retention.ts';
import { type QueueCounts, type QueueState, queueCounts, queueState } from '../delivery-store/stats.ts';
import type { Config } from '../lib/config.ts';
import { breakerStore, providerStates } from '../plane/capabilities/breakers.ts';
import type { CapabilityRegistry } from '../registry.ts';

const PING_TIMEOUT_MS = 1000;

export interface Health {
  status: 'ok' | 'degraded';
  env: Config['env'];
  version: string;
  commit: string;
  db: 'up' | 'down';
  queue: 'up' | 'idle';
  queueDead: number;
  queueFailed24h: number;
  webhooksDead24h: number;
  breakers: { provider: string; state: string }[];
  /** why the status is degraded: one entry per cause (empty when ok) */
  reasons: HealthReason[];
  lastMigration: string | null;
  history: { retentionDays: number; horizon: string | null; oldestPartition: string | null };
  /** the endpoints of the key's project (the route adds them) */
  endpoints?: { id: string; state: 'active' | 'paused' | 'disabled'; waiting: number }[];
}

/** A cause of a degraded status: a stable code, and what it means here. */
export interface HealthReason {
  code: 'database_down' | 'migrations_pending' | 'no_worker' | 'breaker_open' | 'breaker_unknown';
  message: string;
}

const NOTHING_KNOWN: Omit<Figures, 'history'> = {
  state: { busy: false, workerStale: false },
  counts: { dead: 0, failedAttempts24h: 0, dead24h: 0 },
};

/**
 * Health's figures are read off the request's path, so its cost does not grow with the history: the
 * queue's state and the history's horizon at most once a second per process, and the counts (which
 * read every row they count, slow on a large history: docs/decisions/measured-choices.md) at most once every 10 s. The first report waits for them; later ones answer with the last figures and
 * start a new read when they are older than that. Reachability and migrations are read on every report.
 */
const STATE_MAX_AGE_MS = 1000;
const COUNTS_MAX_AGE_MS = 10_000;

interface Figures {
  state: QueueState;
  counts: QueueCounts;
  history: Health['history'];
}

/** Figures read by `read`, at most every `maxAgeMs`, one read at a time, the last kept through failures. */
function periodic<T>(maxAgeMs: number, read: () => Promise<T>) {
  let value: T | undefined;
  let readAt = 0;
  let reading: Promise<void> | undefined;
  const refresh = () => {
    reading ??= read()
      .then((fresh) => {
        value = fresh;
        readAt = Date.now();
      })
      .catch(() => {}) // the database answered the ping but not this read: keep what we last knew
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  return {
    /** The last value, waiting only for the first; a new read starts when it is too old. */
    async get(): Promise<T | undefined> {
      if (value === undefined) await refresh();
      else if (Date.now() - readAt > maxAgeMs) void refresh();
      return value;
    },
    last: () => value,
  };
}

function reasonsOf(state: {
  up: boolean;
  pendingMigrations: number;
  workerStale: boolean;
  breakers: Health['breakers'];
}): HealthReason[] {
  const reasons: HealthReason[] = [];
  if (!state.up)
    reasons.push({ code: 'database_down', message: 'the database did not answer within a second' });
  if (state.pendingMigrations > 0) {
    reasons.push({
      code: 'migrations_pending',
      message: `${state.pendingMigrations} migrations of this build are not applied: run platform migrate`,
    });
  }
  if (state.workerStale) {
    reasons.push({
      code: 'no_worker',
      message: 'deliveries are due and no delivery worker has reported in for 60 s',
    });
  }
  for (const breaker of state.breakers) {
    if (breaker.state === 'open') {
      reasons.push({ code: 'breaker_open', message: `the circuit breaker of ${breaker.provider} is open` });
    } else if (breaker.state === 'unknown') {
      reasons.push({
        code: 'breaker_unknown',
        message: `no live instance of ${breaker.provider.split('/')[0]} reports the breaker of ${breaker.provider}`,
      });
    }
  }
  return reasons;
}

export function healthService(deps: { config: Config; db: Database; registry: CapabilityRegistry }) {
  const { config, db, registry } = deps;
  // Kept from the last successful read so an outage still reports what was last known.
  let lastMigration: string | null = null;
  const history = historyRetention(db);
  const state = periodic(STATE_MAX_AGE_MS, async () => ({
    queue: await queueState(db),
    history: {
      retentionDays: config.retentionDays,
      horizon: await history.horizon(new Date(), config.retentionDays),
      oldestPartition: (await history.partitions())[0]?.day ?? null,
    },
  }));
  const counts = periodic(COUNTS_MAX_AGE_MS, () => queueCounts(db));
  const reports = periodic(STATE_MAX_AGE_MS, () => breakerStore(db).live());
  /** The providers of capabilities of their own, from their instances' live reports. */
  const capabilityBreakers = async (up: boolean) =>
    providerStates(registry, (up ? await reports.get() : reports.last()) ?? []);
  const figures = async (up: boolean): Promise<Figures> => {
    const [s, c] = up ? await Promise.all([state.get(), counts.get()]) : [state.last(), counts.last()];
    return {
      state: s?.queue ?? NOTHING_KNOWN.state,
      counts: c ?? NOTHING_KNOWN.counts,
      history: s?.history ?? { retentionDays: config.retentionDays, horizon: null, oldestPartition: null },
    };
  };

  return {
    async report(): Promise<{ statusCode: 200 | 503; body: Health }> {
      const up = await db.ping(PING_TIMEOUT_MS);
      let pendingMigrations = 0;
      if (up) {
        try {
          const applied = await appliedMigrations(db);
          lastMigration = applied.at(-1) ?? null;
          pendingMigrations = MIGRATIONS.filter((m) => !applied.includes(m.name)).length;
        } catch {
          // as for the figures: the last known
        }
      }
      const { state: queue, counts: queueCounted, history: kept } = await figures(up);
      const breakers = [...registry.breakers(), ...(await capabilityBreakers(up))];
      const reasons = reasonsOf({ up, pendingMigrations, workerStale: queue.workerStale, breakers });
      return {
        statusCode: up ? 200 : 503,
        body: {
          status: reasons.length > 0 ? 'degraded' : 'ok',
          reasons,
          env: config.env,
          version: config.version,
          commit: config.commit,
          db: up ? 'up' : 'down',
          queue: queue.busy ? 'up' : 'idle',
          queueDead: queueCounted.dead,
          queueFailed24h: queueCounted.failedAttempts24h,
          webhooksDead24h: queueCounted.dead24h,
          breakers,
          lastMigration,
          history: kept,
        },
      };
    },

    /** Ready: the database answers and holds every migration this build knows. */
    async ready(): Promise<{ ready: boolean; reason?: string }> {
      if (!(await db.ping(PING_TIMEOUT_MS))) return { ready: false, reason: 'database unreachable' };
      const applied = new Set(await appliedMigrations(db).catch(() => []));
      const pending = MIGRATIONS.filter((m) => !applied.has(m.name)).length;
      return pending ? { ready: false, reason: `${pending} migrations pending` } : { ready: true };
    },
  };
}
