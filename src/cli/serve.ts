// The service commands: start (migrate, first-start bootstrap, API and worker), serve, worker, migrate, and
// openapi (the document this version serves).
import { randomBytes } from 'node:crypto';
import { bootstrap } from '../bootstrap.ts';
import type { Config } from '../config.ts';
import { loadKeyring, parseKeyring } from '../crypto.ts';
import { migrate } from '../db/migrate.ts';
import { connect, createLogger, onShutdownSignal } from '../runtime.ts';
import { createService } from '../service.ts';

export const start = (config: Config) => runService(config, { api: true, worker: true, migrate: true });
export const serve = (config: Config) => runService(config, { api: true, worker: false, migrate: false });
export const worker = (config: Config) => runService(config, { api: false, worker: true, migrate: false });

export async function migrateCommand(config: Config) {
  const connection = await connect(config, 'command', createLogger({ ...config, logLevel: 'warn' }));
  try {
    const applied = await migrate(connection.db);
    console.log(applied.length ? `applied ${applied.join(', ')}` : 'no pending migrations');
  } finally {
    await connection.close();
  }
}

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

async function runService(config: Config, parts: { api: boolean; worker: boolean; migrate: boolean }) {
  const log = createLogger(config);
  const connection = await connect(config, 'service', log);
  const { db } = connection;
  try {
    if (parts.migrate) {
      const applied = await migrate(db);
      if (applied.length) log.info({ applied }, 'migrations applied');
      const created = await bootstrap(db);
      if (created) printFirstKey(config, created.key);
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
  // Printed whatever the log level: the worker's id, and the address to use.
  if (service.worker) console.log(`platform-core delivery worker ${service.worker.id} running`);
  if (service.metricsAddress) console.log(`platform-core metrics on ${service.metricsAddress}/metrics`);
  if (address) {
    log.info({ address, embedded: !config.databaseUrl }, 'listening');
    console.log(`platform-core listening on ${address}`);
  }
}

function printFirstKey(config: Config, key: string) {
  const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  console.log(`
Created project "dev" and an API key holding every scope. It is shown only this once; keep it:

    ${key}

Try it:  curl -H "x-api-key: ${key}" ${base}/core/v1/projects/me
`);
}
