// The management commands an operator scripts: projects, keys, operator keys and limits. They call the
// same services as the management API, audited as the CLI's, and print one JSON object with --json.
import pino from 'pino';
import { readOnly } from '../audit/work.ts';
import { coreRegistry } from '../core-capability.ts';
import type { Database } from '../db/database.ts';
import { keyService } from '../keys/service.ts';
import type { Config } from '../lib/config.ts';
import { CapabilityDirectory } from '../plane/capabilities/directory.ts';
import { capabilityStore } from '../plane/capabilities/store.ts';
import { projectService } from '../projects/service.ts';
import { toProjectMe } from '../projects/store.ts';
import { defaultLimits } from '../registry.ts';
import { limitOverrides } from '../usage/overrides.ts';
import { flags, list, print, required, UsageError } from './arguments.ts';
import { change, everyPage, projectBySlug, withDatabase } from './common.ts';

/** The theme's flags, as `projects create` and `projects update` take them. */
const THEME_FLAGS = {
  'theme-primary': { type: 'string' },
  'theme-accent': { type: 'string' },
  'theme-background': { type: 'string' },
  'theme-text': { type: 'string' },
  'logo-url': { type: 'string' },
} as const;

/** The members of the theme the flags give (`--logo-url none` removes the logo); undefined for none. */
function themeOf(values: Partial<Record<keyof typeof THEME_FLAGS, string>>) {
  const logo = values['logo-url'];
  const given = Object.entries({
    primary: values['theme-primary'],
    accent: values['theme-accent'],
    background: values['theme-background'],
    text: values['theme-text'],
    logoUrl: logo === 'none' ? null : logo,
  }).filter(([, value]) => value !== undefined);
  return given.length > 0 ? Object.fromEntries(given) : undefined;
}

export async function projectsCreate(config: Config, args: string[]) {
  const { values } = flags(args, {
    slug: { type: 'string' },
    name: { type: 'string' },
    mode: { type: 'string' },
    languages: { type: 'string' },
    ...THEME_FLAGS,
  });
  const { slug, name } = required(values, 'projects create', ['slug', 'name']);
  const input = {
    slug,
    name,
    mode: values.mode,
    languages: values.languages === undefined ? undefined : list(values.languages),
    theme: themeOf(values),
  };
  const project = await withDatabase(config, (db) =>
    change(db, (work) => projectService(work).create(input)),
  );
  print(
    values.json,
    toProjectMe(project),
    () => `created project ${project.slug} (${project.id}, ${project.mode})`,
  );
}

export async function projectsList(config: Config, args: string[]) {
  const { values } = flags(args, { 'slug-prefix': { type: 'string' } });
  const projects = await withDatabase(config, (db) =>
    everyPage((page) => projectService(readOnly(db)).list(values['slug-prefix'], page)),
  );
  print(values.json, { data: projects }, () =>
    projects.map((p) => `${p.slug}\t${p.id}\t${p.mode}\t${p.name}`).join('\n'),
  );
}

export async function projectsUpdate(config: Config, args: string[]) {
  const { values } = flags(args, {
    slug: { type: 'string' },
    name: { type: 'string' },
    languages: { type: 'string' },
    ...THEME_FLAGS,
    'retention-days': { type: 'string' },
    'frame-ancestors': { type: 'string' },
  });
  const { slug } = required(values, 'projects update', ['slug']);
  const retention = values['retention-days'];
  if (retention !== undefined && retention !== 'default' && !/^\d+$/.test(retention))
    throw new UsageError('--retention-days is a number of days, or default');
  const patch = {
    name: values.name,
    languages: values.languages === undefined ? undefined : list(values.languages),
    theme: themeOf(values),
    retentionDays: retention === undefined ? undefined : retention === 'default' ? null : Number(retention),
    portalFrameAncestors:
      values['frame-ancestors'] === undefined ? undefined : list(values['frame-ancestors']),
  };
  const project = await withDatabase(config, (db) =>
    change(db, async (work) => projectService(work).update((await projectBySlug(work.db, slug)).id, patch)),
  );
  print(values.json, project, () => `updated project ${project.slug}`);
}

export async function keysCreate(config: Config, args: string[]) {
  const { values } = flags(args, {
    project: { type: 'string' },
    scopes: { type: 'string' },
    name: { type: 'string' },
    'expires-at': { type: 'string' },
  });
  const { project: slug, scopes } = required(values, 'keys create', ['project', 'scopes']);
  const created = await withDatabase(config, (db) =>
    change(db, async (work) =>
      keyService(work).create(await projectBySlug(work.db, slug), {
        scopes: list(scopes),
        name: values.name,
        expiresAt: values['expires-at'],
      }),
    ),
  );
  const { id, key, projectId } = created;
  print(
    values.json,
    { id, key, projectId, scopes: created.scopes },
    () => `created key ${id} for ${slug} (${created.scopes.join(', ')}); shown once:\n${key}`,
  );
}

export async function keysList(config: Config, args: string[]) {
  const { values } = flags(args, { project: { type: 'string' } });
  const { project: slug } = required(values, 'keys list', ['project']);
  const keys = await withDatabase(config, async (db) => {
    const project = await projectBySlug(db, slug);
    return everyPage((page) => keyService(readOnly(db)).list(project.id, page));
  });
  print(values.json, { data: keys }, () =>
    keys
      .map(
        (k) =>
          `${k.id}\t${k.prefix}…\t${k.name ?? '(no name)'}\t${k.revokedAt ? 'revoked' : 'active'}\t${k.lastUsedAt ?? 'never used'}\t${k.scopes.join(',')}`,
      )
      .join('\n'),
  );
}

export async function keysRevoke(config: Config, args: string[]) {
  const { values, positionals } = flags(args, {}, true);
  const [reference] = positionals;
  if (!reference || positionals.length > 1)
    throw new UsageError('keys revoke needs the key: its id, its display prefix, or the key itself');
  const { key, revokedNow } = await withDatabase(config, (db) =>
    change(db, async (work) => keyService(work).revoke((await keyService(work).find(reference)).id)),
  );
  print(values.json, { ...key, revokedNow }, () =>
    revokedNow
      ? `revoked key ${key.id} (${key.prefix}…); every process refuses it within 5 seconds`
      : `key ${key.id} (${key.prefix}…) was already revoked, at ${key.revokedAt}`,
  );
}

export async function operatorKeysCreate(config: Config, args: string[]) {
  const { values } = flags(args, { scopes: { type: 'string' }, name: { type: 'string' } });
  const { scopes } = required(values, 'operator-keys create', ['scopes']);
  const created = await withDatabase(config, (db) =>
    change(db, (work) => keyService(work).createOperator({ scopes: list(scopes), name: values.name })),
  );
  const { id, key, name } = created;
  print(
    values.json,
    { id, key, scopes: created.scopes, name },
    () => `created operator key ${id} (${created.scopes.join(', ')}); shown once:\n${key}`,
  );
}

/** Core and the capabilities declared by manifests: the metrics a limit may name, and their defaults. */
async function registryOf(db: Database) {
  const registry = coreRegistry();
  await new CapabilityDirectory({ db, registry, log: pino({ level: 'silent' }) }).refresh();
  return registry;
}

export async function limitsGet(config: Config, args: string[]) {
  const { values } = flags(args, { project: { type: 'string' } });
  const { project: slug } = required(values, 'limits get', ['project']);
  const limits = await withDatabase(config, async (db) => {
    const registry = await registryOf(db);
    const overrides = limitOverrides(readOnly(db), {
      registry,
      defaults: () => defaultLimits(registry, config),
      declaredMetrics: () => capabilityStore(db).declaredMetrics(),
    });
    return overrides.effective((await projectBySlug(db, slug)).id);
  });
  print(values.json, { data: limits }, () =>
    limits.map((l) => `${l.capability}/${l.metric}\t${l.dailyLimit}\t${l.source}`).join('\n'),
  );
}

export async function limitsSet(config: Config, args: string[], clear = false) {
  const { values } = flags(args, {
    project: { type: 'string' },
    capability: { type: 'string' },
    metric: { type: 'string' },
    'daily-limit': { type: 'string' },
  });
  const command = clear ? 'limits clear' : 'limits set';
  const {
    project: slug,
    capability,
    metric,
  } = required(values, command, ['project', 'capability', 'metric']);
  const limit = values['daily-limit'];
  if (!clear && (limit === undefined || !/^\d+$/.test(limit) || !Number.isSafeInteger(Number(limit))))
    throw new UsageError('--daily-limit must be a whole number');
  const result = await withDatabase(config, async (db) => {
    const registry = await registryOf(db);
    return change(db, async (work) => {
      const overrides = limitOverrides(work, {
        registry,
        defaults: () => defaultLimits(registry, config),
        declaredMetrics: () => capabilityStore(work.db).declaredMetrics(),
      });
      const projectId = (await projectBySlug(work.db, slug)).id;
      if (clear) {
        await overrides.clear(projectId, capability, metric);
        return (await overrides.effective(projectId)).find(
          (l) => l.capability === capability && l.metric === metric,
        );
      }
      return overrides.set(projectId, { capability, metric, dailyLimit: Number(limit) });
    });
  });
  print(values.json, result ?? { capability, metric, dailyLimit: null, source: 'default' }, () =>
    result
      ? `daily limit of ${slug} for ${capability}/${metric}: ${result.dailyLimit} (${result.source}; every process applies it within 5 seconds)`
      : `${slug} has no daily limit for ${capability}/${metric}`,
  );
}
