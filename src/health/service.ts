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

export function healthService(deps: { config: Config; db: Database; registry: CapabilityRegistry }) {
  const { config, db, registry } = deps;
  // Kept from the last successful read so an outage still reports what was last known.
  let lastMigration: string | null = null;
  let lastStats: QueueStats | undefined;
  let lastHistory: Health['history'] = {
    retentionDays: config.retentionDays,
    horizon: null,
    oldestPartition: null,
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
          lastStats = await queueStats(db);
          const history = historyRetention(db);
          lastHistory = {
            retentionDays: config.retentionDays,
            horizon: await history.horizon(new Date(), config.retentionDays),
            oldestPartition: (await history.partitions())[0]?.day ?? null,
          };
        } catch {
          // The database answered the ping but not these reads: report what we last knew.
        }
      }
      const stats = lastStats ?? NOTHING_KNOWN;
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
          history: lastHistory,
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
