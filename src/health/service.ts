// GET /api/health: every field from real sources: the database (reachability, migrations), the queue
// (filled by the delivery module), the capability registry (breakers) and the configuration.
import type { CapabilityRegistry } from '../capabilities.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { appliedMigrations, MIGRATIONS } from '../db/migrate.ts';
import { type QueueStats, queueStats } from '../delivery/stats.ts';
import { historyRetention } from '../history/retention.ts';

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
  lastMigration: string | null;
  history: { retentionDays: number; horizon: string | null; oldestPartition: string | null };
}

const NOTHING_KNOWN: QueueStats = {
  pending: 0,
  dead: 0,
  failedAttempts24h: 0,
  dead24h: 0,
  workerStale: false,
};

/**
 * The queue's and the history's figures are read at most once a second per process, off the request's
 * path: their counts grow with the history (the day's failed attempts are counted one by one: 80 ms at
 * 10 M deliveries, measured by bench growth), and the cost of health must not. The first report waits
 * for them; later ones answer with the last figures and start a new read when those are over a second
 * old. Reachability and migrations are read on every report.
 */
const FIGURES_MAX_AGE_MS = 1000;

interface Figures {
  stats: QueueStats;
  history: Health['history'];
}

export function healthService(deps: { config: Config; db: Database; registry: CapabilityRegistry }) {
  const { config, db, registry } = deps;
  // Kept from the last successful read so an outage still reports what was last known.
  let lastMigration: string | null = null;
  let figures: Figures | undefined;
  let readAt = 0;
  let reading: Promise<void> | undefined;

  async function readFigures(): Promise<void> {
    try {
      const history = historyRetention(db);
      const stats = await queueStats(db);
      figures = {
        stats,
        history: {
          retentionDays: config.retentionDays,
          horizon: await history.horizon(new Date(), config.retentionDays),
          oldestPartition: (await history.partitions())[0]?.day ?? null,
        },
      };
      readAt = Date.now();
    } catch {
      // The database answered the ping but not these reads: report what we last knew.
    }
  }
  const refresh = () => {
    reading ??= readFigures().finally(() => {
      reading = undefined;
    });
    return reading;
  };

  return {
    async report(): Promise<{ statusCode: 200 | 503; body: Health }> {
      const up = await db.ping(PING_TIMEOUT_MS);
      let pendingMigrations = false;
      if (up) {
        try {
          const applied = await appliedMigrations(db);
          lastMigration = applied.at(-1) ?? null;
          pendingMigrations = MIGRATIONS.some((m) => !applied.includes(m.name));
        } catch {
          // as below: the last known
        }
        if (!figures) await refresh();
        else if (Date.now() - readAt > FIGURES_MAX_AGE_MS) void refresh();
      }
      const stats = figures?.stats ?? NOTHING_KNOWN;
      const breakers = registry.breakers();
      const degraded =
        !up || pendingMigrations || stats.workerStale || breakers.some((b) => b.state === 'open');
      return {
        statusCode: up ? 200 : 503,
        body: {
          status: degraded ? 'degraded' : 'ok',
          env: config.env,
          version: config.version,
          commit: config.commit,
          db: up ? 'up' : 'down',
          queue: stats.pending > 0 ? 'up' : 'idle',
          queueDead: stats.dead,
          queueFailed24h: stats.failedAttempts24h,
          webhooksDead24h: stats.dead24h,
          breakers,
          lastMigration,
          history: figures?.history ?? {
            retentionDays: config.retentionDays,
            horizon: null,
            oldestPartition: null,
          },
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
