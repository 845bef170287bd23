// CI's own database on the machine's PostgreSQL server: `create NAME` (fails if the server is
// unreachable, which fails CI) and `drop NAME`.
import pg from 'pg';

const [action, name] = process.argv.slice(2);
if (!name || !/^[a-z0-9_]+$/.test(name) || (action !== 'create' && action !== 'drop')) {
  console.error('usage: database.ts create|drop NAME');
  process.exit(2);
}
const server = process.env.CI_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const client = new pg.Client({ connectionString: server, connectionTimeoutMillis: 10_000 });
try {
  await client.connect();
  const { rows } = await client.query('show server_version_num');
  if (Number(rows[0].server_version_num) < 150000) throw new Error('PostgreSQL 15 or newer is required');
  await client.query(
    action === 'create' ? `create database ${name}` : `drop database if exists ${name} with (force)`,
  );
  console.log(`${action === 'create' ? 'created' : 'dropped'} database ${name} on ${new URL(server).host}`);
} catch (error) {
  console.error(`PostgreSQL server at ${new URL(server).host}: ${(error as Error).message}`);
  process.exit(1);
} finally {
  await client.end().catch(() => {});
}
