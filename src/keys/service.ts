// API keys: `pk_test_` / `pk_live_` (a project's, by its mode), `pk_op_` (an operator's, belonging to no
// project) or `pk_cap_` (a capability's: docs/capabilities.md) + 32 base62 characters (~190 bits). Only the SHA-256 of the whole key is stored, with a short
// display prefix; the key itself is shown once, at creation. Creating and revoking a key is audited.
import { createHash, randomInt } from 'node:crypto';
import type { Work } from '../audit/work.ts';
import { notFound, PlatformError } from '../lib/errors.ts';
import { type Page, pageFrom } from '../lib/pagination.ts';
import { type ProjectMe, toProjectMe } from '../projects/store.ts';
import { isOperatorScope, isScope, type KeyKind, OPERATOR_SCOPES, SCOPES } from './scopes.ts';
import { type KeyRow, keyStore } from './store.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32;
const KEY_SHAPE = /^pk_(test|live|op|cap)_[0-9A-Za-z]{32}$/;
const DISPLAY_PREFIX_LENGTH = 12;

/**
 * Who a key speaks for: a project (with its record, cached with the key), the operator (neither), or a
 * capability (its name).
 */
export interface Principal {
  keyId: string;
  kind: KeyKind;
  project: ProjectMe | null;
  capability: string | null;
  scopes: ReadonlySet<string>;
  /** when the key stops working (ms since the epoch), or null */
  expiresAt: number | null;
}

/** What checking a presented key found. Expected outcomes are values; only faults throw. */
export type KeyCheck =
  | { kind: 'valid'; principal: Principal }
  | { kind: 'invalid' }
  | { kind: 'revoked' }
  | { kind: 'expired' };

/** A key as the management API shows it (docs/management.md). */
export interface ApiKey {
  id: string;
  projectId: string | null;
  capability: string | null;
  prefix: string;
  name: string | null;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** A key just made: its record, and the key itself, shown this once. */
export type CreatedKey = ApiKey & { key: string };

export interface NewKey {
  scopes: string[];
  name?: string | null;
  expiresAt?: string | null;
}

export const hashKey = (key: string) => createHash('sha256').update(key).digest();

export function generateKey(kind: 'test' | 'live' | 'op' | 'cap'): string {
  let random = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) random += BASE62[randomInt(62)];
  return `pk_${kind}_${random}`;
}

export const toApiKey = (row: KeyRow): ApiKey => ({
  id: row.id,
  projectId: row.project_id,
  capability: row.capability,
  prefix: row.display_prefix,
  name: row.name,
  scopes: row.scopes,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at,
});

const invalid = (pointer: string, detail: string) =>
  new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer, detail }] });

/**
 * The scopes asked for, distinct, each one a key of this kind may hold ('all' = every one of Core's or
 * the operator's): a project's key may also hold the scopes capabilities declare (`declared`, asked only
 * when a scope is not Core's), always by name.
 */
async function scopesOf(
  requested: string[],
  kind: 'project' | 'operator',
  declared: () => Promise<string[]>,
): Promise<string[]> {
  const known: readonly string[] = kind === 'project' ? SCOPES : OPERATOR_SCOPES;
  if (requested.length === 1 && requested[0] === 'all') return [...known];
  const fits = kind === 'project' ? isScope : isOperatorScope;
  let unknown = requested.filter((scope) => !fits(scope));
  if (unknown.length && kind === 'project') {
    const theirs = new Set(await declared());
    unknown = unknown.filter((scope) => !theirs.has(scope));
  }
  if (unknown.length)
    throw invalid(
      '/scopes',
      `unknown scope ${unknown.join(', ')}: a ${kind} key's scopes are ${known.join(', ')}${kind === 'project' ? ', those capabilities declare,' : ''} or all`,
    );
  return [...new Set(requested)];
}

export const keyService = ({ db, audit }: Work) => {
  const store = keyStore(db);

  async function create(project: ProjectMe | null, input: NewKey): Promise<CreatedKey> {
    const scopes = await scopesOf(input.scopes, project ? 'project' : 'operator', () =>
      store.declaredScopes(),
    );
    const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
    if (expiresAt && !(expiresAt.getTime() > Date.now()))
      throw invalid('/expiresAt', 'expiresAt must be a time in the future');
    const key = generateKey(project ? project.mode : 'op');
    const row = await store.insert({
      projectId: project?.id ?? null,
      hash: hashKey(key),
      prefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
      scopes,
      name: input.name ?? null,
      expiresAt,
    });
    const fields = ['scopes', ...(input.name ? ['name'] : []), ...(expiresAt ? ['expiresAt'] : [])];
    audit({
      action: 'key.created',
      projectId: project?.id ?? null,
      target: { type: 'key', id: row.id },
      fields,
    });
    return { ...toApiKey(row), key };
  }

  return {
    /** A key of a project, with its scopes (or 'all'), an optional name and expiry; the key is shown once. */
    create: (project: ProjectMe, input: NewKey) => create(project, input),

    /** An operator key: it belongs to no project and holds operator scopes. */
    createOperator: (input: NewKey) => create(null, input),

    async list(projectId: string, page: Page) {
      const rows = await store.list(projectId, page);
      const listed = pageFrom(rows, page.limit, (row) => ({ at: row.created_at, id: row.id }));
      return { data: listed.data.map(toApiKey), nextCursor: listed.nextCursor };
    },

    /** Revokes the key (again: the same answer, and nothing changes); every process refuses it within 5 s. */
    async revoke(keyId: string): Promise<{ key: ApiKey; revokedNow: boolean }> {
      const revoked = await store.revoke(keyId);
      if (!revoked) throw notFound('key');
      if (revoked.revokedNow) {
        audit({
          action: 'key.revoked',
          projectId: revoked.key.project_id,
          target: { type: 'key', id: keyId },
          fields: ['revokedAt'],
        });
      }
      return { key: toApiKey(revoked.key), revokedNow: revoked.revokedNow };
    },

    /** The key an operator names by its id, its display prefix or the key itself. */
    async find(reference: string): Promise<ApiKey> {
      const by = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(reference)
        ? { id: reference }
        : KEY_SHAPE.test(reference)
          ? { hash: hashKey(reference) }
          : { prefix: reference };
      const rows = await store.find(by);
      if (rows.length > 1)
        throw invalid('/key', `the prefix ${reference} names ${rows.length} keys: give the key id`);
      const row = rows[0];
      if (!row) throw notFound('key');
      return toApiKey(row);
    },

    /**
     * Looks the keys up by their hashes, in one round trip; a key of the wrong shape is invalid without
     * one. Every key asked has its check.
     */
    async checkMany(keys: string[]): Promise<Map<string, KeyCheck>> {
      const checks = new Map<string, KeyCheck>(keys.map((key) => [key, { kind: 'invalid' }]));
      const asked = keys.filter((key) => KEY_SHAPE.test(key)).map((key) => ({ key, hash: hashKey(key) }));
      if (asked.length === 0) return checks;
      const byHash = new Map(asked.map(({ key, hash }) => [hash.toString('hex'), key]));
      for (const row of await store.findByHashes(asked.map(({ hash }) => hash))) {
        const key = byHash.get(row.key_hash.toString('hex'));
        if (key !== undefined) checks.set(key, checkOf(row));
      }
      return checks;
    },
  };
};

/** What a key's row says of it now. */
function checkOf(row: Awaited<ReturnType<ReturnType<typeof keyStore>['findByHashes']>>[number]): KeyCheck {
  if (row.revoked_at) return { kind: 'revoked' };
  const expiresAt = row.expires_at ? row.expires_at.getTime() : null;
  if (expiresAt !== null && expiresAt <= Date.now()) return { kind: 'expired' };
  return {
    kind: 'valid',
    principal: {
      keyId: row.id,
      kind: row.project ? 'project' : row.capability ? 'capability' : 'operator',
      project: row.project ? toProjectMe(row.project) : null,
      capability: row.capability,
      scopes: new Set(row.scopes),
      expiresAt,
    },
  };
}
