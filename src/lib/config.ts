// Environment → typed configuration, validated once at start-up and passed down.
// Nothing else in the code base reads process.env.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_POOL_SIZE } from './defaults.ts';
import { ConfigError } from './errors.ts';

export const ENVIRONMENTS = ['local', 'dev', 'prod'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export interface Config {
  env: Environment;
  host: string;
  port: number;
  /** A PostgreSQL server; when undefined the embedded PostgreSQL in dataDir is used. */
  databaseUrl: string | undefined;
  /** PLATFORM_DATABASE_POOL_SIZE: the most connections this process holds to PostgreSQL */
  databasePoolSize: number;
  dataDir: string;
  version: string;
  commit: string;
  logLevel: string;
  webhookAllowPrivate: boolean;
  /** PLATFORM_ENCRYPTION_KEY: base64 32-byte keys, newest first (see crypto.ts) */
  encryptionKey: string | undefined;
  rateLimit: { perSecond: number; burst: number };
  /** REDIS_URL: request rate limits shared by every API process (each process alone without it) */
  redisUrl: string | undefined;
  /** PLATFORM_PUBLIC_URL: where users reach the service (portal links); the listening address when unset */
  publicUrl: string | undefined;
  /** PLATFORM_METRICS_PORT and PLATFORM_METRICS_HOST: the Prometheus listener, off when no port is set */
  metrics: { host: string; port: number } | undefined;
  retryScheduleSeconds: number[];
  deliveryTimeoutMs: number;
  /** daily limits of every project (overridable per project): PLATFORM_DAILY_LIMITS */
  dailyLimits: { capability: string; metric: string; dailyLimit: number }[];
  /** sends in flight per worker process */
  workerConcurrency: number;
  /** the backstop poll of the delivery worker (a notification wakes it at once) */
  workerPollMs: number;
  /** an endpoint whose deliveries die this many times in a row (none delivered between) is disabled */
  disableAfterDead: number;
  /** how many days of history (events, deliveries, attempts) are kept; a project may keep fewer */
  retentionDays: number;
  /**
   * erasure across capabilities: how long one has to answer before its task fails (7 days), and the
   * delay before a push is tried again, doubled each time (at most an hour)
   */
  erasure: { windowSeconds: number; retrySeconds: number };
  /** how long the gateway waits for a capability's answer before it answers 504 */
  gatewayTimeoutMs: number;
  /** stopping the API: how long it keeps answering (with connection: close) first, and the most it waits */
  shutdown: { delayMs: number; timeoutMs: number };
}

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const platformEnv = env.PLATFORM_ENV ?? 'local';
  if (!ENVIRONMENTS.includes(platformEnv as Environment)) {
    throw new ConfigError(`PLATFORM_ENV must be one of ${ENVIRONMENTS.join(', ')} (got "${platformEnv}")`);
  }
  const webhookAllowPrivate = env.PLATFORM_WEBHOOK_ALLOW_PRIVATE === '1';
  if (webhookAllowPrivate && platformEnv === 'prod') {
    throw new ConfigError('PLATFORM_WEBHOOK_ALLOW_PRIVATE=1 is refused when PLATFORM_ENV=prod');
  }
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  const publicUrl = env.PLATFORM_PUBLIC_URL?.trim().replace(/\/+$/, '') || undefined;
  if (publicUrl && !/^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(publicUrl)) {
    throw new ConfigError('PLATFORM_PUBLIC_URL must be an http:// or https:// URL without query or fragment');
  }
  const redisUrl = env.REDIS_URL?.trim() || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  }
  return {
    env: platformEnv as Environment,
    host: env.HOST || '127.0.0.1',
    port: integer(env, 'PORT', 8080, 0, 65535),
    databaseUrl,
    publicUrl,
    dataDir: path.resolve(env.PLATFORM_DATA_DIR || '.data'),
    version: packageJson.version,
    commit: env.PLATFORM_COMMIT || gitCommit(),
    logLevel: env.PLATFORM_LOG_LEVEL || 'info',
    webhookAllowPrivate,
    encryptionKey: env.PLATFORM_ENCRYPTION_KEY?.trim() || undefined,
    rateLimit: {
      perSecond: integer(env, 'PLATFORM_RATE_LIMIT_PER_SECOND', 100, 0, 1_000_000),
      burst: integer(env, 'PLATFORM_RATE_LIMIT_BURST', 200, 0, 1_000_000),
    },
    redisUrl,
    metrics:
      env.PLATFORM_METRICS_PORT === undefined || env.PLATFORM_METRICS_PORT === ''
        ? undefined
        : {
            host: env.PLATFORM_METRICS_HOST || '127.0.0.1',
            port: integer(env, 'PLATFORM_METRICS_PORT', 0, 0, 65535),
          },
    retryScheduleSeconds: retrySchedule(env.PLATFORM_RETRY_SCHEDULE ?? '5,300,1800,7200,18000,36000,36000'),
    deliveryTimeoutMs: integer(env, 'PLATFORM_DELIVERY_TIMEOUT_MS', 15_000, 1, 600_000),
    dailyLimits: dailyLimits(env.PLATFORM_DAILY_LIMITS ?? DEFAULT_DAILY_LIMITS),
    workerConcurrency: integer(env, 'PLATFORM_WORKER_CONCURRENCY', 128, 1, 10_000),
    databasePoolSize: integer(env, 'PLATFORM_DATABASE_POOL_SIZE', DEFAULT_POOL_SIZE, 1, 1000),
    workerPollMs: integer(env, 'PLATFORM_WORKER_POLL_MS', 500, 10, 60_000),
    disableAfterDead: integer(env, 'PLATFORM_DISABLE_AFTER_DEAD', 10, 1, 1_000_000),
    retentionDays: integer(env, 'PLATFORM_RETENTION_DAYS', 30, 1, 400),
    erasure: {
      windowSeconds: integer(env, 'PLATFORM_ERASURE_WINDOW_SECONDS', 7 * 86_400, 1, 30 * 86_400),
      retrySeconds: integer(env, 'PLATFORM_ERASURE_RETRY_SECONDS', 30, 1, 3600),
    },
    gatewayTimeoutMs: integer(env, 'PLATFORM_GATEWAY_TIMEOUT_MS', 30_000, 100, 300_000),
    shutdown: {
      delayMs: integer(env, 'PLATFORM_SHUTDOWN_DELAY_MS', 1000, 0, 600_000),
      timeoutMs: integer(env, 'PLATFORM_SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    },
  };
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return value;
}

// Erasure is never limited: it is a legal duty. Deliveries are counted, never refused.
const DEFAULT_DAILY_LIMITS = 'core/api_requests=1000000,core/events_published=100000';

/** "capability/metric=N,…" (an empty value: no limits). */
function dailyLimits(raw: string) {
  return raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const match = /^([a-z][a-z0-9_]*)\/([a-z][a-z0-9_]*)=(\d+)$/.exec(part);
      if (!match)
        throw new ConfigError(
          `PLATFORM_DAILY_LIMITS entries look like core/api_requests=100000 (got "${part}")`,
        );
      return { capability: match[1] as string, metric: match[2] as string, dailyLimit: Number(match[3]) };
    });
}

function retrySchedule(raw: string): number[] {
  const seconds = raw.split(',').map((part) => Number(part.trim()));
  if (seconds.length === 0 || seconds.some((s) => !Number.isFinite(s) || s < 0)) {
    throw new ConfigError(`PLATFORM_RETRY_SCHEDULE must be comma-separated seconds (got "${raw}")`);
  }
  return seconds;
}

/** The commit of the checkout the code runs from, when it runs from one. */
function gitCommit(): string {
  try {
    const cwd = path.dirname(new URL(import.meta.url).pathname);
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return 'unknown';
  }
}
