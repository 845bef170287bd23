// The capability commands an operator runs on the server: register a capability (its first key and its
// signing secret printed once), list them, show one with its live breaker reports, point it somewhere
// else, and remove it. The same service as the management API, audited as the CLI's; a change is bound in
// every running process before the command prints it (docs/decisions/settings-bind.md).

import type { Work } from '../audit/work.ts';
import { TenantSchemas } from '../catalogue/validation.ts';
import { erasureTasks } from '../erasure/tasks.ts';
import type { Config } from '../lib/config.ts';
import { loadKeyring } from '../lib/crypto.ts';
import { capabilityService, GRANTS, type Grant, toCapability } from '../plane/capabilities/service.ts';
import { capabilityStore } from '../plane/capabilities/store.ts';
import { flags, print, UsageError } from './arguments.ts';
import { change, withDatabase } from './common.ts';

/** Runs `fn` with the capability service in one audited transaction of the CLI's. */
async function withCapabilities<T>(
  config: Config,
  fn: (capabilities: ReturnType<typeof capabilityService>) => Promise<T>,
): Promise<T> {
  const keyring = loadKeyring(
    { env: config.env, configured: config.encryptionKey, dataDir: config.dataDir },
    (message) => console.error(message),
  );
  const schemas = new TenantSchemas();
  const leaving = (work: Work) => (name: string) => erasureTasks(work.db).skipOf(name);
  return withDatabase(config, (db) =>
    change(db, (work) =>
      fn(capabilityService(work, { keyring, schemas, changed: () => {}, leaving: leaving(work) })),
    ),
  ).finally(() => schemas.close());
}

/** The one positional argument, the capability's name. */
function nameOf(command: string, positionals: string[]): string {
  const [name] = positionals;
  if (!name || positionals.length > 1)
    throw new UsageError(`capabilities ${command} needs the capability’s name`);
  return name;
}

export async function capabilitiesCreate(config: Config, args: string[]) {
  const { values, positionals } = flags(
    args,
    { description: { type: 'string' }, upstream: { type: 'string' }, 'erasure-url': { type: 'string' } },
    true,
  );
  const name = nameOf('create', positionals);
  const created = await withCapabilities(config, (capabilities) =>
    capabilities.register({
      name,
      description: values.description ?? name,
      upstream: values.upstream,
      erasureUrl: values['erasure-url'],
    }),
  );
  print(
    values.json,
    created,
    () =>
      `registered capability ${created.name}; shown once:\n  key            ${created.key}\n  signing secret ${created.signingSecret}`,
  );
}

export async function capabilitiesList(config: Config, args: string[]) {
  const { values } = flags(args, {});
  const capabilities = await withDatabase(config, async (db) =>
    (await capabilityStore(db).list()).map(toCapability),
  );
  print(values.json, { data: capabilities }, () =>
    capabilities
      .map(
        (c) =>
          `${c.name}\t${c.upstream ?? '-'}\t${c.manifest ? 'manifest declared' : 'no manifest yet'}\t${c.description}`,
      )
      .join('\n'),
  );
}

/** Changes what only an operator decides: the description, where requests and erasures go, the grants. */
export async function capabilitiesUpdate(config: Config, args: string[]) {
  const { values, positionals } = flags(
    args,
    {
      description: { type: 'string' },
      upstream: { type: 'string' },
      'erasure-url': { type: 'string' },
      grants: { type: 'string' },
    },
    true,
  );
  const name = nameOf('update', positionals);
  const patch = {
    description: values.description,
    upstream: values.upstream === undefined ? undefined : values.upstream || null,
    erasureUrl: values['erasure-url'] === undefined ? undefined : values['erasure-url'] || null,
    grants: values.grants === undefined ? undefined : grantsOf(values.grants),
  };
  if (Object.values(patch).every((value) => value === undefined))
    throw new UsageError(
      'capabilities update needs --description, --upstream, --erasure-url or --grants ("" clears one)',
    );
  const updated = await withCapabilities(config, (capabilities) => capabilities.update(name, patch));
  print(
    values.json,
    updated,
    () =>
      `updated capability ${updated.name}: upstream ${updated.upstream ?? '-'}, erasure URL ${updated.erasureUrl ?? '-'}, grants ${updated.grants.join(',') || '-'}; every running process applies it`,
  );
}

/** `a,b` as grants, each one an operator may give. */
function grantsOf(list: string): Grant[] {
  const grants = list.split(',').filter(Boolean);
  const unknown = grants.filter((g) => !(GRANTS as readonly string[]).includes(g));
  if (unknown.length > 0)
    throw new UsageError(`--grants takes ${GRANTS.join(', ')}; not ${unknown.join(', ')}`);
  return grants as Grant[];
}

/** One capability, with what its live instances last reported of their breakers. */
export async function capabilitiesShow(config: Config, args: string[]) {
  const { values, positionals } = flags(args, {}, true);
  const name = nameOf('show', positionals);
  const shown = await withCapabilities(config, (capabilities) => capabilities.withReports(name));
  print(values.json, shown, () =>
    [
      `${shown.name}\t${shown.description}`,
      `  upstream      ${shown.upstream ?? '-'}`,
      `  erasure URL   ${shown.erasureUrl ?? '-'}`,
      `  manifest      ${shown.manifest ? 'declared' : 'none yet'}`,
      `  grants        ${shown.grants.join(', ') || '-'}`,
      `  breakers      ${shown.breakerReports.length === 0 ? 'no live reports' : ''}`,
      ...shown.breakerReports.map((r) => `    ${r.provider}\t${r.state}\t${r.instance}\t${r.reportedAt}`),
    ].join('\n'),
  );
}

/** Removes a capability (docs/capabilities.md says what goes and what stays). */
export async function capabilitiesRemove(config: Config, args: string[]) {
  const { values, positionals } = flags(args, {}, true);
  const name = nameOf('remove', positionals);
  await withCapabilities(config, (capabilities) => capabilities.remove(name));
  print(values.json, { removed: name }, () => `removed capability ${name}; every running process applies it`);
}
