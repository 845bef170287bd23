// CI's own database on the machine's PostgreSQL server: `create NAME` (fails if the server is
// unreachable, which fails CI) and `drop NAME`.
import pg from 'pg';
import { createNamedDatabase, dropDatabase } from '../support/database.ts';

const [action, name] = process.argv.slice(2);
if (!name || !/^[a-z0-9_]+$/.test(name) || (action !== 'create' && action !== 'drop')) {
  console.error('usage: database.ts create|drop NAME');
  process.exit(2);
}
const server = process.env.CI_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
try {
  const client = new pg.Client({ connectionString: server, connectionTimeoutMillis: 10_000 });
  await client.connect();
  const { rows } = await client.query('show server_version_num');
  await client.end();
  if (Number(rows[0].server_version_num) < 150000) throw new Error('PostgreSQL 15 or newer is required');
  if (action === 'create') await createNamedDatabase(server, name);
  else await dropDatabase(server, name);
  console.log(`${action === 'create' ? 'created' : 'dropped'} database ${name} on ${new URL(server).host}`);
} catch (error) {
  console.error(`PostgreSQL server at ${new URL(server).host}: ${(error as Error).message}`);
  process.exit(1);
}
