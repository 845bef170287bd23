import { type Db, isoColumn, onlyRow } from '../db/database.ts';
import { keyset, type Page } from '../lib/pagination.ts';
import type { ProjectRow } from '../projects/store.ts';

/** A key as the management API shows it: never the key nor its hash. */
export interface KeyRow {
  id: string;
  project_id: string | null;
  capability: string | null;
  display_prefix: string;
  name: string | null;
  scopes: string[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

const RECORD = `id, project_id, capability, display_prefix, name, scopes, ${isoColumn('created_at')}, ${isoColumn('expires_at')},
  ${isoColumn('last_used_at')}, ${isoColumn('revoked_at')}`;

export const keyStore = (db: Db) => ({
  async insert(key: {
    projectId: string | null;
    capability?: string | null;
    hash: Buffer;
    prefix: string;
    scopes: readonly string[];
    name: string | null;
    expiresAt: Date | null;
  }): Promise<KeyRow> {
    return onlyRow(
      await db.query<KeyRow>(
        `insert into api_keys (project_id, capability, key_hash, display_prefix, scopes, name, expires_at)
         values ($1, $2, $3, $4, $5, $6, $7)
         returning ${RECORD}`,
        [key.projectId, key.capability ?? null, key.hash, key.prefix, key.scopes, key.name, key.expiresAt],
      ),
    );
  },

  /**
   * The keys with these hashes, each with its project (none for an operator's or a capability's), in one
   * round trip: the key cache's misses and refreshes (keys/cache.ts).
   */
  async findByHashes(keyHashes: Buffer[]) {
    const { rows } = await db.query<{
      key_hash: Buffer;
      id: string;
      capability: string | null;
      scopes: string[];
      revoked_at: Date | null;
      expires_at: Date | null;
      project: ProjectRow | null;
    }>({
      name: 'api-keys-by-hash',
      // One index read of each table per hash, whatever their size: a prepared statement's generic plan
      // cannot know how many hashes come, and for a join it chose to hash a sequential scan of both.
      text: `select k.key_hash, k.id, k.capability, k.scopes, k.revoked_at, k.expires_at,
                    (select to_jsonb(p) from projects p where p.id = k.project_id) as project
               from unnest($1::bytea[]) as wanted (hash)
              cross join lateral (select * from api_keys where key_hash = wanted.hash limit 1) as k`,
      values: [keyHashes],
    });
    return rows;
  },

  /** Every scope a capability's manifest declares (a project's key may hold them). */
  async declaredScopes(): Promise<string[]> {
    const { rows } = await db.query<{ name: string }>(
      `select s->>'name' as name from capabilities, jsonb_array_elements(manifest->'scopes') as s
        where manifest is not null`,
    );
    return rows.map((row) => row.name);
  },

  /** A key by its id, its display prefix or its hash (whichever the caller has). */
  async find(by: { id?: string; prefix?: string; hash?: Buffer }): Promise<KeyRow[]> {
    const { rows } = await db.query<KeyRow>(
      `select ${RECORD} from api_keys
        where ($1::uuid is not null and id = $1) or ($2::text is not null and display_prefix = $2)
           or ($3::bytea is not null and key_hash = $3)`,
      [by.id ?? null, by.prefix ?? null, by.hash ?? null],
    );
    return rows;
  },

  /** A project's keys, newest first. */
  async list(projectId: string, page: Page): Promise<KeyRow[]> {
    const paged = keyset(page, { at: 'created_at', order: 'newest', first: 2 });
    const { rows } = await db.query<KeyRow>(
      `select ${RECORD} from api_keys where project_id = $1 ${paged.sql}`,
      [projectId, ...paged.values],
    );
    return rows;
  },

  /**
   * Revokes the key unless it already is: the key as it is now, and whether this call revoked it (its
   * revocation time is this transaction's; an earlier revocation kept its own, earlier one).
   */
  async revoke(keyId: string): Promise<{ key: KeyRow; revokedNow: boolean } | undefined> {
    const { rows } = await db.query<KeyRow & { revoked_now: boolean }>(
      `update api_keys set revoked_at = coalesce(revoked_at, now())
        where id = $1
       returning ${RECORD}, revoked_at = now() as revoked_now`,
      [keyId],
    );
    const row = rows[0];
    if (!row) return undefined;
    const { revoked_now, ...key } = row;
    return { key, revokedNow: revoked_now };
  },

  /** Records when keys were last used (the minute), never moving a time backwards. */
  async touch(used: { id: string; at: Date }[]) {
    if (used.length === 0) return;
    await db.query(
      `update api_keys k set last_used_at = greatest(k.last_used_at, u.at)
         from unnest($1::uuid[], $2::timestamptz[]) as u(id, at)
        where k.id = u.id`,
      [used.map((u) => u.id), used.map((u) => u.at)],
    );
  },
});
