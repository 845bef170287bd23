// The capability commands an operator runs on the server: register a capability (its first key and its
// signing secret printed once) and list them. The same service as the management API, audited as the CLI's.
import { capabilityService, toCapability } from '../capabilities/service.ts';
import { capabilityStore } from '../capabilities/store.ts';
import { TenantSchemas } from '../catalogue/validation.ts';
import type { Config } from '../config.ts';
import { loadKeyring } from '../crypto.ts';
import { flags, print, UsageError } from './arguments.ts';
import { change, withDatabase } from './common.ts';

export async function capabilitiesCreate(config: Config, args: string[]) {
  const { values, positionals } = flags(
    args,
    { description: { type: 'string' }, upstream: { type: 'string' }, 'erasure-url': { type: 'string' } },
    true,
  );
  const [name] = positionals;
  if (!name || positionals.length > 1)
    throw new UsageError('capabilities create needs the capability’s name');
  const keyring = loadKeyring(
    { env: config.env, configured: config.encryptionKey, dataDir: config.dataDir },
    (message) => console.error(message),
  );
  const schemas = new TenantSchemas();
  const created = await withDatabase(config, (db) =>
    change(db, (work) =>
      capabilityService(work, { keyring, schemas, changed: () => {} }).register({
        name,
        description: values.description ?? name,
        upstream: values.upstream,
        erasureUrl: values['erasure-url'],
      }),
    ),
  ).finally(() => schemas.close());
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
