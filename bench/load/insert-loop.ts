// The baseline of idempotent writes: single-row INSERTs through pg, `connections` at a time, for
// `duration` seconds, into a table shaped like webhook_endpoints.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { summary } from './summary.ts';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  url: string;
  connections: number;
  duration: number;
};
const pool = new pg.Pool({ connectionString: config.url, max: config.connections });
await pool.query(`create table if not exists bench_inserts (
  project_id uuid not null, id uuid not null default gen_random_uuid(), url text not null,
  event_types text[] not null, active_secret bytea not null, created_at timestamptz not null default now(),
  primary key (project_id, id))`);
const projectId = '00000000-0000-4000-8000-000000000001';
const secret = Buffer.alloc(61, 1);
const latencies: number[] = [];
const deadline = performance.now() + config.duration * 1000;
let errors = 0;
await Promise.all(
  Array.from({ length: config.connections }, async () => {
    while (performance.now() < deadline) {
      const started = performance.now();
      try {
        await pool.query(
          `insert into bench_inserts (project_id, url, event_types, active_secret) values ($1, $2, $3, $4)`,
          [projectId, 'https://93.184.216.34/hook', ['pay.payment.succeeded'], secret],
        );
        latencies.push(performance.now() - started);
      } catch {
        errors++;
      }
    }
  }),
);
await pool.end();
console.log(JSON.stringify(summary(latencies, errors, config.duration)));
