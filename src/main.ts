// The `platform` CLI: start | serve | worker | migrate | projects create | keys create | keys revoke.
import { parseArgs } from 'node:util';
import { bootstrap } from './bootstrap.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { loadKeyring } from './crypto.ts';
import { migrate } from './db/migrate.ts';
import { PlatformError } from './errors.ts';
import { isScope, SCOPES, type Scope } from './keys/scopes.ts';
import { keyService } from './keys/service.ts';
import { projectService } from './projects/service.ts';
import { connect, createLogger, onShutdownSignal } from './runtime.ts';
import { createService } from './service.ts';
import { usageStore } from './usage/store.ts';

const USAGE = `usage: platform <command>

  start                 migrate, then run the API and the delivery worker in one process
  serve                 run the API only
  worker                run the delivery worker only
  migrate               apply pending database migrations
  projects create --slug S --name N [--mode test|live] [--languages en,fr] [--json]
  keys create --project SLUG --scopes a,b,... [--json]     (--scopes all = every scope)
  keys revoke KEY_ID
  limits set --project SLUG --capability C --metric M --daily-limit N

Configuration comes from the environment: see README.md.`;

class UsageError extends Error {}

async function main(argv: string[]) {
  const [command, sub] = argv;
  const config = loadConfig();
  switch (command) {
    case 'start':
      return runService(config, { api: true, worker: true, migrate: true });
    case 'serve':
      return runService(config, { api: true, worker: false, migrate: false });
    case 'worker':
      return runService(config, { api: false, worker: true, migrate: false });
    case 'migrate':
      return withDatabase(config, async (db) => {
        const applied = await migrate(db);
        console.log(applied.length ? `applied ${applied.join(', ')}` : 'no pending migrations');
      });
    case 'projects':
      if (sub === 'create') return createProject(config, argv.slice(2));
      break;
    case 'keys':
      if (sub === 'create') return createKey(config, argv.slice(2));
      if (sub === 'revoke') return revokeKey(config, argv.slice(2));
      break;
    case 'limits':
      if (sub === 'set') return setLimit(config, argv.slice(2));
      break;
    case undefined:
    case 'help':
    case '--help':
      console.log(USAGE);
      return;
  }
  throw new UsageError(`unknown command: ${argv.join(' ')}`);
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

async function withDatabase(
  config: Config,
  fn: (db: Awaited<ReturnType<typeof connect>>['db']) => Promise<void>,
) {
  const connection = await connect(config, 'command', createLogger({ ...config, logLevel: 'warn' }));
  try {
    await fn(connection.db);
  } finally {
    await connection.close();
  }
}

async function createProject(config: Config, args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      slug: { type: 'string' },
      name: { type: 'string' },
      mode: { type: 'string' },
      languages: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (!values.slug || !values.name) throw new UsageError('projects create needs --slug and --name');
  const { slug, name, mode } = values;
  await withDatabase(config, async (db) => {
    await migrate(db);
    const languages = values.languages?.split(',').map((l) => l.trim());
    const project = await projectService(db).create({ slug, name, mode, languages });
    console.log(
      values.json
        ? JSON.stringify(project)
        : `created project ${project.slug} (${project.id}, ${project.mode})`,
    );
  });
}

async function createKey(config: Config, args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      project: { type: 'string' },
      scopes: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (!values.project || !values.scopes) throw new UsageError('keys create needs --project and --scopes');
  const requested = values.scopes === 'all' ? [...SCOPES] : values.scopes.split(',').map((s) => s.trim());
  const unknown = requested.filter((s) => !isScope(s));
  if (unknown.length || requested.length === 0) {
    throw new UsageError(`unknown scope ${unknown.join(', ')}; scopes are ${SCOPES.join(', ')} or all`);
  }
  const slug = values.project;
  await withDatabase(config, async (db) => {
    await migrate(db);
    const project = await projectService(db).findBySlug(slug);
    if (!project) throw new PlatformError('NOT_FOUND', `no project with slug "${slug}"`);
    const created = await keyService(db).create(project, [...new Set(requested)] as Scope[]);
    if (values.json) console.log(JSON.stringify(created));
    else
      console.log(
        `created key ${created.id} for ${slug} (${created.scopes.join(', ')}); shown once:\n${created.key}`,
      );
  });
}

async function revokeKey(config: Config, args: string[]) {
  const [keyId] = args;
  if (!keyId || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(keyId)) {
    throw new UsageError('keys revoke needs the key id (a UUID)');
  }
  await withDatabase(config, async (db) => {
    await migrate(db);
    if (!(await keyService(db).revoke(keyId))) throw new PlatformError('NOT_FOUND', `no key ${keyId}`);
    console.log(`revoked key ${keyId}; every process refuses it within 5 seconds`);
  });
}

async function setLimit(config: Config, args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      project: { type: 'string' },
      capability: { type: 'string' },
      metric: { type: 'string' },
      'daily-limit': { type: 'string' },
    },
  });
  const { project: slug, capability, metric } = values;
  const limit = values['daily-limit'];
  if (!slug || !capability || !metric || limit === undefined) {
    throw new UsageError('limits set needs --project, --capability, --metric and --daily-limit');
  }
  const name = /^[a-z][a-z0-9_]*$/;
  if (!name.test(capability) || !name.test(metric))
    throw new UsageError('capability and metric are lowercase names such as core, api_requests');
  if (!/^\d+$/.test(limit) || !Number.isSafeInteger(Number(limit)))
    throw new UsageError('--daily-limit must be a whole number');
  await withDatabase(config, async (db) => {
    await migrate(db);
    const project = await projectService(db).findBySlug(slug);
    if (!project) throw new PlatformError('NOT_FOUND', `no project with slug "${slug}"`);
    await usageStore(db).setLimit(project.id, capability, metric, Number(limit));
    console.log(
      `daily limit of ${slug} for ${capability}/${metric}: ${limit} (every process applies it within 5 seconds)`,
    );
  });
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  const badArguments = String((error as { code?: string }).code).startsWith('ERR_PARSE_ARGS');
  if (error instanceof UsageError || error instanceof ConfigError || badArguments) {
    console.error(`platform: ${message}\n\n${USAGE}`);
    process.exit(2);
  }
  console.error(`platform: ${message}`);
  process.exit(1);
});
