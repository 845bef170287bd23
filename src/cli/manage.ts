// The management commands an operator scripts: projects, keys, operator keys and limits. They call the
// same services as the management API, audited as the CLI's, and print one JSON object with --json.
import type { CapabilityRegistry } from '../capabilities.ts';
import type { Config } from '../config.ts';
import { keyService } from '../keys/service.ts';
import { projectService } from '../projects/service.ts';
import { toProjectMe } from '../projects/store.ts';
import { limitOverrides } from '../usage/overrides.ts';
import {
  change,
  everyPage,
  flags,
  list,
  print,
  projectBySlug,
  required,
  UsageError,
  withDatabase,
} from './common.ts';

export async function projectsCreate(config: Config, args: string[]) {
  const { values } = flags(args, {
    slug: { type: 'string' },
    name: { type: 'string' },
    mode: { type: 'string' },
    languages: { type: 'string' },
  });
  const { slug, name } = required(values, 'projects create', ['slug', 'name']);
  const languages = values.languages === undefined ? undefined : list(values.languages);
  const project = await withDatabase(config, (db) =>
    change(db, (tx, audit) => projectService(tx).create({ slug, name, mode: values.mode, languages }, audit)),
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
    everyPage((page) => projectService(db).list(values['slug-prefix'], page)),
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
    'theme-primary': { type: 'string' },
    'theme-accent': { type: 'string' },
    'theme-background': { type: 'string' },
    'theme-text': { type: 'string' },
    'logo-url': { type: 'string' },
    'retention-days': { type: 'string' },
    'frame-ancestors': { type: 'string' },
  });
  const { slug } = required(values, 'projects update', ['slug']);
  const theme = {
    primary: values['theme-primary'],
    accent: values['theme-accent'],
    background: values['theme-background'],
    text: values['theme-text'],
    logoUrl:
      values['logo-url'] === undefined
        ? undefined
        : values['logo-url'] === 'none'
          ? null
          : values['logo-url'],
  };
  const retention = values['retention-days'];
  if (retention !== undefined && retention !== 'default' && !/^\d+$/.test(retention))
    throw new UsageError('--retention-days is a number of days, or default');
  const patch = {
    name: values.name,
    languages: values.languages === undefined ? undefined : list(values.languages),
    theme: Object.values(theme).some((value) => value !== undefined) ? theme : undefined,
    retentionDays: retention === undefined ? undefined : retention === 'default' ? null : Number(retention),
    portalFrameAncestors:
      values['frame-ancestors'] === undefined ? undefined : list(values['frame-ancestors']),
  };
  const project = await withDatabase(config, (db) =>
    change(db, async (tx, audit) =>
      projectService(tx).update((await projectBySlug(tx, slug)).id, patch, audit),
    ),
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
    change(db, async (tx, audit) =>
      keyService(tx).create(
        await projectBySlug(tx, slug),
        { scopes: list(scopes), name: values.name, expiresAt: values['expires-at'] },
        audit,
      ),
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
    return everyPage((page) => keyService(db).list(project.id, page));
  });
  print(values.json, { data: keys }, () =>
    keys
      .map(
        (k) =>
          `${k.id}\t${k.prefix}…\t${k.revokedAt ? 'revoked' : 'active'}\t${k.lastUsedAt ?? 'never used'}\t${k.scopes.join(',')}`,
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
    change(db, async (tx, audit) => keyService(tx).revoke((await keyService(tx).find(reference)).id, audit)),
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
    change(db, (tx, audit) =>
      keyService(tx).createOperator({ scopes: list(scopes), name: values.name }, audit),
    ),
  );
  const { id, key, name } = created;
  print(
    values.json,
    { id, key, scopes: created.scopes, name },
    () => `created operator key ${id} (${created.scopes.join(', ')}); shown once:\n${key}`,
  );
}

export async function limitsGet(config: Config, registry: CapabilityRegistry, args: string[]) {
  const { values } = flags(args, { project: { type: 'string' } });
  const { project: slug } = required(values, 'limits get', ['project']);
  const limits = await withDatabase(config, async (db) =>
    limitOverrides(db, { registry, defaults: config.dailyLimits }).effective(
      (await projectBySlug(db, slug)).id,
    ),
  );
  print(values.json, { data: limits }, () =>
    limits.map((l) => `${l.capability}/${l.metric}\t${l.dailyLimit}\t${l.source}`).join('\n'),
  );
}

export async function limitsSet(config: Config, registry: CapabilityRegistry, args: string[], clear = false) {
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
  const overrides = (db: Parameters<typeof limitOverrides>[0]) =>
    limitOverrides(db, { registry, defaults: config.dailyLimits });
  const result = await withDatabase(config, (db) =>
    change(db, async (tx, audit) => {
      const projectId = (await projectBySlug(tx, slug)).id;
      if (clear) {
        await overrides(tx).clear(projectId, capability, metric, audit);
        return (await overrides(tx).effective(projectId)).find(
          (l) => l.capability === capability && l.metric === metric,
        );
      }
      return overrides(tx).set(projectId, { capability, metric, dailyLimit: Number(limit) }, audit);
    }),
  );
  print(values.json, result ?? { capability, metric, dailyLimit: null, source: 'default' }, () =>
    result
      ? `daily limit of ${slug} for ${capability}/${metric}: ${result.dailyLimit} (${result.source}; every process applies it within 5 seconds)`
      : `${slug} has no daily limit for ${capability}/${metric}`,
  );
}
