// The `platform` CLI: the service commands (cli/serve.ts) and the management commands (cli/manage.ts).
// A command's module is loaded when that command runs: `--help` or a wrong word loads none, and a
// management command never loads the HTTP app (bench/RESULTS.md, 2026-11-28).
import { readFileSync } from 'node:fs';
import { UsageError } from './cli/arguments.ts';
import { loadConfig } from './lib/config.ts';
import { ConfigError, PlatformError } from './lib/errors.ts';

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
  capabilities show NAME
  capabilities update NAME [--description D] [--upstream URL] [--erasure-url URL] [--grants a,b]
                  ("" clears one; grants: projects:read, usage:read)
  capabilities remove NAME
  --version

Every command takes --json: one JSON object on stdout and nothing else.
Configuration comes from the environment: see docs/configuration.md.`;

const version = () =>
  (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;

/** The usage of a command (its lines of USAGE, each with the lines that continue it), or undefined. */
function usageOf(command: string, sub: string | undefined): string | undefined {
  const lines = USAGE.split('\n');
  const blocks = (head: string) =>
    lines.flatMap((line, i) => {
      if (!`${line.trimEnd()} `.startsWith(head)) return [];
      const continued = lines.slice(i + 1).findIndex((next) => !/^ {4,}/.test(next));
      const block = lines.slice(i, continued < 0 ? undefined : i + 1 + continued);
      return [`  platform ${block.map((part) => part.trim()).join('\n      ')}`];
    });
  const own = sub ? blocks(`  ${command} ${sub} `) : [];
  const found = own.length > 0 ? own : blocks(`  ${command} `);
  if (found.length === 0) return undefined;
  return `usage:\n${found.join('\n')}\n\nEvery command takes --json.`;
}

/** A flag a problem's pointer stands for: /theme/primary is --theme-primary, /theme/logoUrl --logo-url. */
const flagOf = (pointer: string) => {
  const kebab = pointer
    .replace(/^\//, '')
    .replaceAll('/', '-')
    .replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  return `--${kebab === 'theme-logo-url' ? 'logo-url' : kebab}`;
};

async function main(argv: string[]) {
  const [command, sub, ...rest] = argv;
  if (command === '--version' || command === 'version') return console.log(version());
  if (command === undefined || command === 'help' || command === '--help') return console.log(USAGE);
  if (argv.includes('--help') || argv.includes('-h')) {
    const usage = usageOf(command, sub?.startsWith('-') ? undefined : sub);
    if (!usage) throw new UsageError(`unknown command: ${command}`);
    return console.log(usage);
  }
  const config = loadConfig();
  const service = () => import('./cli/serve.ts');
  const manage = () => import('./cli/manage.ts');
  const capabilities = () => import('./cli/capabilities.ts');
  const commands: Record<string, () => Promise<unknown>> = {
    start: async () => (await service()).start(config),
    dev: async () => (await import('./cli/dev.ts')).dev(config),
    serve: async () => (await service()).serve(config),
    worker: async () => (await service()).worker(config),
    migrate: async () => (await import('./cli/migrate.ts')).migrateCommand(config),
    openapi: async () => (await service()).openapiCommand(config),
    'projects create': async () => (await manage()).projectsCreate(config, rest),
    'projects list': async () => (await manage()).projectsList(config, rest),
    'projects update': async () => (await manage()).projectsUpdate(config, rest),
    'keys create': async () => (await manage()).keysCreate(config, rest),
    'keys list': async () => (await manage()).keysList(config, rest),
    'keys revoke': async () => (await manage()).keysRevoke(config, rest),
    'operator-keys create': async () => (await manage()).operatorKeysCreate(config, rest),
    'limits get': async () => (await manage()).limitsGet(config, rest),
    'limits set': async () => (await manage()).limitsSet(config, rest),
    'limits clear': async () => (await manage()).limitsSet(config, rest, true),
    'capabilities create': async () => (await capabilities()).capabilitiesCreate(config, rest),
    'capabilities list': async () => (await capabilities()).capabilitiesList(config, rest),
    'capabilities show': async () => (await capabilities()).capabilitiesShow(config, rest),
    'capabilities update': async () => (await capabilities()).capabilitiesUpdate(config, rest),
    'capabilities remove': async () => (await capabilities()).capabilitiesRemove(config, rest),
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
  // A refused value is said by the flag that gave it.
  const errors = error instanceof PlatformError ? (error.options.errors ?? []) : [];
  const named = errors.filter((e) => e.pointer).map((e) => `${flagOf(e.pointer as string)}: ${e.detail}`);
  console.error(`platform: ${named.length > 0 ? named.join('\n') : message}`);
  process.exit(1);
});
