// The `platform` CLI: the service commands (cli/serve.ts) and the management commands (cli/manage.ts).
import { readFileSync } from 'node:fs';
import * as capabilities from './cli/capabilities.ts';
import { UsageError } from './cli/common.ts';
import { dev } from './cli/dev.ts';
import * as manage from './cli/manage.ts';
import * as service from './cli/serve.ts';
import { ConfigError, loadConfig } from './config.ts';
import { CORE_CAPABILITY } from './context.ts';
import { CapabilityRegistry } from './registry.ts';

const USAGE = `usage: platform <command> [--json]

  start                 migrate, then run the API and the delivery worker in one process
  dev                   start for a developer's machine: readable logs, private webhook targets, and a
                        receiver that prints every event of project dev (never in production)
  serve                 run the API only
  worker                run the delivery worker only
  migrate               apply pending database migrations
  openapi               print the OpenAPI document this version serves
  projects create --slug S --name N [--mode test|live] [--languages en,fr]
  projects list [--slug-prefix P]
  projects update --slug S [--name N] [--languages en,fr] [--theme-primary #RRGGBB] [--theme-accent …]
                  [--theme-background …] [--theme-text …] [--logo-url URL|none] [--retention-days N|default]
                  [--frame-ancestors https://a,https://b]
  keys create --project SLUG --scopes a,b,…|all [--name N] [--expires-at ISO-8601]
  keys list --project SLUG
  keys revoke KEY_ID|PREFIX|KEY
  operator-keys create --scopes a,b,…|all [--name N]
  limits get --project SLUG
  limits set --project SLUG --capability C --metric M --daily-limit N
  limits clear --project SLUG --capability C --metric M
  capabilities create NAME [--description D] [--upstream URL] [--erasure-url URL]
  capabilities list
  --version

Every command takes --json: one JSON object on stdout and nothing else.
Configuration comes from the environment: see docs/configuration.md.`;

const version = () =>
  (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;

async function main(argv: string[]) {
  const [command, sub, ...rest] = argv;
  if (command === '--version' || command === 'version') return console.log(version());
  if (command === undefined || command === 'help' || command === '--help') return console.log(USAGE);
  const config = loadConfig();
  const registry = new CapabilityRegistry();
  registry.register(CORE_CAPABILITY);
  const commands: Record<string, () => Promise<unknown>> = {
    start: () => service.start(config),
    dev: () => dev(config),
    serve: () => service.serve(config),
    worker: () => service.worker(config),
    migrate: () => service.migrateCommand(config),
    openapi: () => service.openapiCommand(config),
    'projects create': () => manage.projectsCreate(config, rest),
    'projects list': () => manage.projectsList(config, rest),
    'projects update': () => manage.projectsUpdate(config, rest),
    'keys create': () => manage.keysCreate(config, rest),
    'keys list': () => manage.keysList(config, rest),
    'keys revoke': () => manage.keysRevoke(config, rest),
    'operator-keys create': () => manage.operatorKeysCreate(config, rest),
    'limits get': () => manage.limitsGet(config, registry, rest),
    'limits set': () => manage.limitsSet(config, registry, rest),
    'limits clear': () => manage.limitsSet(config, registry, rest, true),
    'capabilities create': () => capabilities.capabilitiesCreate(config, rest),
    'capabilities list': () => capabilities.capabilitiesList(config, rest),
  };
  const run = commands[command] ?? commands[`${command} ${sub}`];
  if (!run || (commands[command] && sub !== undefined))
    throw new UsageError(`unknown command: ${argv.join(' ')}`);
  await run();
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
