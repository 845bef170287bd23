// Bulk set-up for benchmarks: many projects with one all-scope key each, inserted in one statement.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { SCOPES } from '../src/keys/scopes.ts';
import { generateKey, hashKey } from '../src/keys/service.ts';

export interface Tenant {
  projectId: string;
  key: string;
}

export async function migrated(url: string) {
  const db = openDatabase(url, { max: 2 });
  await migrate(db);
  await db.close();
}

export async function seedTenants(url: string, count: number, prefix = 'b'): Promise<Tenant[]> {
  const tenants = Array.from({ length: count }, () => ({
    projectId: randomUUID(),
    key: generateKey('test'),
  }));
  const client = new pg.Client(url);
  await client.connect();
  await client.query(
    `with p as (
       insert into projects (id, slug, name, mode)
       select id, $2 || '-' || n, 'Bench ' || n, 'test' from unnest($1::uuid[]) with ordinality as t(id, n)
       returning id
     )
     insert into api_keys (project_id, key_hash, display_prefix, scopes)
     select id, hash, 'pk_test_ben', $4 from unnest($1::uuid[], $3::bytea[]) as k(id, hash)`,
    [
      tenants.map((t) => t.projectId),
      `${prefix}${Date.now().toString(36)}`,
      tenants.map((t) => hashKey(t.key)),
      [...SCOPES],
    ],
  );
  await client.end();
  return tenants;
}
