// The database alone, on the same open loop as paced.ts (schedule.ts): a one-row INSERT, each its own
// transaction, `rate` a second for `seconds` through a pg pool of `connections`. What a durable write
// costs at that rate before any service is in the way: its commit waits for the WAL to reach the disk.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { onSchedule } from './schedule.ts';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  url: string;
  rate: number;
  seconds: number;
  connections: number;
};
const pool = new pg.Pool({ connectionString: config.url, max: config.connections });
await pool.query(`create table if not exists bench_commits (
  id bigint generated always as identity primary key, at timestamptz not null default now())`);
// Connections opened first, untimed, as paced.ts opens its own.
await Promise.all(Array.from({ length: config.connections }, () => pool.query('select 1')));
const result = await onSchedule(config.rate, config.seconds, async () => {
  await pool.query('insert into bench_commits default values');
  return true;
});
await pool.end();
console.log(JSON.stringify(result));
