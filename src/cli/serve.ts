// The service commands: start (migrate, first-start bootstrap, API and worker), serve, worker, and openapi
// (the document this version serves).
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { appliedMigrations, migrate } from '../db/migrate.ts';
import type { Config } from '../lib/config.ts';
import { loadKeyring, parseKeyring } from '../lib/crypto.ts';
import { createService, type Service } from '../service.ts';
import { bootstrap } from './bootstrap.ts';
import { connect, createLogger, onShutdownSignal } from './runtime.ts';

export const start = (config: Config) => announced(config, { api: true, worker: true, migrate: true });
export const serve = (config: Config) => announced(config, { api: true, worker: false, migrate: false });
export const worker = (config: Config) => announced(config, { api: false, worker: true, migrate: false });

/** Prints the OpenAPI document this version serves: `npm run openapi` writes it to openapi.json. */
export async function openapiCommand(config: Config) {
  const log = createLogger({ ...config, logLevel: 'warn' });
  const connection = await connect(config, 'command', log);
  try {
    // The API is built as `serve` builds it, and never listens; nothing is encrypted, so any key will do.
    const keyring = parseKeyring(randomBytes(32).toString('base64'));
    const { app } = await createService({
      config,
      db: connection.db,
      log,
      keyring,
      api: true,
      worker: false,
    });
    if (!app) throw new Error('the API was not built');
    await app.ready();
    process.stdout.write(`${JSON.stringify(app.swagger(), null, 2)}\n`);
    await app.close();
  } finally {
    await connection.close();
  }
}

interface Parts {
  api: boolean;
  worker: boolean;
  migrate: boolean;
}

/** The running service as `start` leaves it: for `dev`, which adds to it. */
export interface Running {
  service: Service;
  log: Logger;
  /** where the API listens, when it does */
  address: string | undefined;
  /** the key the first start made, shown once */
  firstKey: string | undefined;
}

async function runService(
  config: Config,
  parts: Parts,
  log: Logger = createLogger(config),
): Promise<Running> {
  const connection = await connect(config, 'service', log);
  const { db } = connection;
  let firstKey: string | undefined;
  try {
    if (parts.migrate) {
      const applied = await migrate(db);
      if (applied.length) log.info({ applied }, 'migrations applied');
      firstKey = (await bootstrap(db))?.key;
    } else if ((await appliedMigrations(db)).length === 0) {
      // An empty database: say what to do, rather than fail on the first missing table with a stack.
      throw new Error(
        'the database has no tables yet: run `platform migrate` first (`platform start` migrates)',
      );
    }
  } catch (error) {
    await connection.close();
    throw error;
  }
  const keyring = loadKeyring(
    { env: config.env, configured: config.encryptionKey, dataDir: config.dataDir },
    (message) => log.warn(message),
  );
  const service = await createService({ config, db, log, keyring, api: parts.api, worker: parts.worker });
  onShutdownSignal(log, async () => {
    await service.stop();
    await connection.close();
    log.info('stopped');
  });
  const address = await service.start({ port: config.port, host: config.host });
  return { service, log, address, firstKey };
}

/** Runs the parts and says so: the first start's key, the worker's id, and the address to use. */
async function announced(config: Config, parts: Parts) {
  const { service, log, address, firstKey } = await runService(config, parts);
  if (firstKey) printFirstKey(config, firstKey);
  // Printed whatever the log level.
  if (service.worker) console.log(`platform-core delivery worker ${service.worker.id} running`);
  if (service.metricsAddress) console.log(`platform-core metrics on ${service.metricsAddress}/metrics`);
  if (address) {
    log.info({ address, embedded: !config.databaseUrl }, 'listening');
    console.log(`platform-core listening on ${address}`);
  }
}

/** migrate, the first start's project and key, the API and the worker: what `dev` runs, quietly. */
export const runForDevelopment = (config: Config, log: Logger) =>
  runService(config, { api: true, worker: true, migrate: true }, log);

function printFirstKey(config: Config, key: string) {
  const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  console.log(`
Created project "dev" and an API key holding every scope. It is shown only this once; keep it:

    ${key}

Try it:  curl -H "x-api-key: ${key}" ${base}/core/v1/projects/me
`);
}
