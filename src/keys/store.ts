import { type Db, onlyRow } from '../db/database.ts';
import type { ProjectRow } from '../projects/store.ts';

export interface KeyRow {
  id: string;
  project_id: string;
  scopes: string[];
  revoked_at: Date | null;
}

export const keyStore = (db: Db) => ({
  async insert(projectId: string, keyHash: Buffer, displayPrefix: string, scopes: readonly string[]) {
    const inserted = await db.query<{ id: string }>(
      `insert into api_keys (project_id, key_hash, display_prefix, scopes)
       values ($1, $2, $3, $4)
       returning id`,
      [projectId, keyHash, displayPrefix, scopes],
    );
    return onlyRow(inserted).id;
  },

  /** The key with this hash and its project, in one round trip: this runs on every uncached request. */
  async findByHash(keyHash: Buffer) {
    const { rows } = await db.query<KeyRow & { project: ProjectRow }>({
      name: 'api-key-by-hash',
      text: `select k.id, k.project_id, k.scopes, k.revoked_at, to_jsonb(p) as project
               from api_keys k
               join projects p on p.id = k.project_id
              where k.key_hash = $1`,
      values: [keyHash],
    });
    return rows[0];
  },

  async revoke(keyId: string) {
    const { rows } = await db.query<{ id: string }>(
      `update api_keys set revoked_at = coalesce(revoked_at, now())
        where id = $1
       returning id`,
      [keyId],
    );
    return rows.length > 0;
  },
});
