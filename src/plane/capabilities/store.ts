import { type Db, isoColumn } from '../../db/database.ts';
import type { Manifest } from './manifest.ts';

export interface CapabilityRow {
  name: string;
  description: string;
  upstream: string | null;
  erasure_url: string | null;
  manifest: Manifest | null;
  grants: string[];
  has_previous_secret: boolean;
  created_at: string;
  updated_at: string;
}

/** A capability with its sealed signing secrets, for what Core signs on its behalf. */
export interface CapabilitySecrets {
  active_secret: Buffer;
  previous_secret: Buffer | null;
}

const RECORD = `name, description, upstream, erasure_url, manifest, grants, previous_secret is not null as has_previous_secret,
  ${isoColumn('created_at')}, ${isoColumn('updated_at')}`;

export const capabilityStore = (db: Db) => ({
  /** A new capability; nothing when the name is taken. */
  async insert(c: {
    name: string;
    description: string;
    upstream: string | null;
    erasureUrl: string | null;
    sealedSecret: Buffer;
  }): Promise<CapabilityRow | undefined> {
    const { rows } = await db.query<CapabilityRow>(
      `insert into capabilities (name, description, upstream, erasure_url, active_secret)
       values ($1, $2, $3, $4, $5)
       on conflict (name) do nothing
       returning ${RECORD}`,
      [c.name, c.description, c.upstream, c.erasureUrl, c.sealedSecret],
    );
    return rows[0];
  },

  async get(name: string, options: { lock?: boolean } = {}): Promise<CapabilityRow | undefined> {
    const { rows } = await db.query<CapabilityRow>(
      `select ${RECORD} from capabilities where name = $1 ${options.lock ? 'for update' : ''}`,
      [name],
    );
    return rows[0];
  },

  async list(): Promise<CapabilityRow[]> {
    const { rows } = await db.query<CapabilityRow>(`select ${RECORD} from capabilities order by name`);
    return rows;
  },

  /** Sets what an operator may change; the capability as it is now. */
  async update(
    name: string,
    values: { description: string; upstream: string | null; erasureUrl: string | null; grants: string[] },
  ) {
    const { rows } = await db.query<CapabilityRow>(
      `update capabilities set description = $2, upstream = $3, erasure_url = $4, grants = $5, updated_at = now()
        where name = $1 returning ${RECORD}`,
      [name, values.description, values.upstream, values.erasureUrl, values.grants],
    );
    return rows[0];
  },

  async putManifest(name: string, manifest: Manifest) {
    const { rows } = await db.query<CapabilityRow>(
      `update capabilities set manifest = $2, updated_at = now() where name = $1 returning ${RECORD}`,
      [name, manifest],
    );
    return rows[0];
  },

  /** A new active signing secret; the active one becomes the previous one (an older previous is dropped). */
  async rotate(name: string, sealedSecret: Buffer) {
    const { rows } = await db.query<CapabilityRow>(
      `update capabilities set previous_secret = active_secret, active_secret = $2, updated_at = now()
        where name = $1 returning ${RECORD}`,
      [name, sealedSecret],
    );
    return rows[0];
  },

  /** Drops the previous signing secret; the capability, and whether there was one. */
  async retirePrevious(name: string) {
    const { rows } = await db.query<CapabilityRow & { retired: boolean }>(
      `update capabilities set previous_secret = null
         from (select previous_secret is not null as retired from capabilities where name = $1 for update) as before
        where name = $1
       returning ${RECORD}, before.retired`,
      [name],
    );
    return rows[0];
  },

  /**
   * Removes the capability: its keys and breaker reports go with it (foreign keys, migration 0018). Its
   * usage, events and deliveries stay: they name it by text, as history.
   */
  async remove(name: string): Promise<boolean> {
    const { rowCount } = await db.query('delete from capabilities where name = $1', [name]);
    return (rowCount ?? 0) > 0;
  },

  /** Every metric the manifests declare, as `capability/metric`. */
  async declaredMetrics(capability?: string): Promise<string[]> {
    const { rows } = await db.query<{ metric: string }>(
      `select c.name || '/' || (m->>'name') as metric
         from capabilities c, jsonb_array_elements(c.manifest->'metrics') as m
        where c.manifest is not null and ($1::text is null or c.name = $1)`,
      [capability ?? null],
    );
    return rows.map((row) => row.metric);
  },

  async secrets(name: string): Promise<CapabilitySecrets | undefined> {
    const { rows } = await db.query<CapabilitySecrets>(
      `select active_secret, previous_secret from capabilities where name = $1`,
      [name],
    );
    return rows[0];
  },
});
