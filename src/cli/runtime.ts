// Opening the database in either mode, and running a service process until SIGTERM/SIGINT.
import pino, { type Logger } from 'pino';
import { type Database, isUnavailable, openDatabase } from '../db/database.ts';
import { acquireServiceLock, openEmbeddedCluster, serviceRunning } from '../db/embedded.ts';
import type { Config } from '../lib/config.ts';

export function createLogger(config: Config, destination?: NodeJS.WritableStream): Logger {
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    base: { service: 'platform-core', env: config.env },
    // Belt and braces: no log line may carry a key or a secret, whatever logs it.
    redact: {
      paths: [
        'req.headers["x-api-key"]',
        'req.headers.authorization',
        '*.secret',
        '*.key',
        '*.apiKey',
        'headers["x-api-key"]',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

export interface Connection {
  db: Database;
  close(): Promise<void>;
}

/**
 * A service (start, serve, worker) owns the embedded cluster: it takes the data directory's service lock
 * and stops PostgreSQL when it exits. A command attaches to the running cluster, or starts it for its own
 * duration and stops it afterwards unless a service has started meanwhile.
 */
export async function connect(config: Config, role: 'service' | 'command', log: Logger): Promise<Connection> {
  if (config.databaseUrl) {
    const db = openDatabase(config.databaseUrl, { max: config.databasePoolSize });
    try {
      await requireVersion(db, log);
    } catch (error) {
      await db.close();
      throw error;
    }
    return { db, close: () => db.close() };
  }
  const releaseLock = role === 'service' ? await acquireServiceLock(config.dataDir) : undefined;
  try {
    const cluster = await openEmbeddedCluster(config.dataDir, (message) => log.info(message));
    const db = openDatabase(cluster.url, { max: config.databasePoolSize });
    return {
      db,
      async close() {
        await db.close();
        const mustStop =
          role === 'service' || (cluster.startedHere && !(await serviceRunning(config.dataDir)));
        if (mustStop) await cluster.stop();
        await releaseLock?.();
      },
    };
  } catch (error) {
    await releaseLock?.();
    throw error;
  }
}

const MINIMUM_SERVER_VERSION = 150000; // PostgreSQL 15

const STARTUP_WAIT_MS = 60_000;

/**
 * Waits for the server (a process may start while PostgreSQL restarts: it should not die of it), then
 * refuses one older than PostgreSQL 15 with the version it has.
 */
async function requireVersion(db: Database, log: Logger) {
  const deadline = Date.now() + STARTUP_WAIT_MS;
  let result: Awaited<ReturnType<typeof db.query<{ server_version_num: string; server_version: string }>>>;
  for (;;) {
    try {
      result = await db.query(
        `select current_setting('server_version_num') as server_version_num, current_setting('server_version') as server_version`,
      );
      break;
    } catch (error) {
      if (!isUnavailable(error) || Date.now() > deadline) throw error;
      log.warn({ err: error }, 'the database is not reachable yet; retrying');
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  const { rows } = result;
  const row = rows[0];
  if (row && Number(row.server_version_num) < MINIMUM_SERVER_VERSION) {
    throw new Error(`PostgreSQL 15 or newer is required; DATABASE_URL points to ${row.server_version}`);
  }
}

/** Calls stop once on the first SIGTERM or SIGINT; a second signal exits at once. */
export function onShutdownSignal(log: Logger, stop: () => Promise<void>) {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, 'shutting down: no new requests, finishing in-flight ones');
    stop().then(
      () => process.exit(0),
      (error) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
