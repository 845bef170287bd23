// Usage ingestion, `connections` loops for `duration` seconds, each sending batches of `batch` new records
// one after another: through the service (POST /capability/v1/usage), or, as the baseline, inserted by a
// raw pg loop with one multi-row statement into a table with the same unique key. The rate is records a
// second; `accepted` is what the service said it counted, to check the counters against.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { Pool } from 'undici';
import { summary } from './summary.ts';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  mode: 'service' | 'raw';
  url: string;
  key?: string;
  projects: string[];
  connections: number;
  duration: number;
  batch: number;
  prefix: string;
};
const day = new Date().toISOString().slice(0, 10);
let next = 0;
const batchOf = () =>
  Array.from({ length: config.batch }, () => {
    const n = next++;
    return {
      id: `${config.prefix}-${n}`,
      projectId: config.projects[n % config.projects.length] as string,
      metric: 'units',
      value: 1,
    };
  });

async function viaService(records: ReturnType<typeof batchOf>, api: Pool) {
  const response = await api.request({
    path: '/capability/v1/usage',
    method: 'POST',
    headers: { 'x-api-key': config.key ?? '', 'content-type': 'application/json' },
    body: JSON.stringify({ records }),
  });
  const body = (await response.body.json()) as { accepted?: number };
  if (response.statusCode !== 200) throw new Error(String(response.statusCode));
  return body.accepted ?? 0;
}

async function viaSql(records: ReturnType<typeof batchOf>, pool: pg.Pool) {
  const { rowCount } = await pool.query(
    `insert into bench_usage (capability, id, project_id, metric, value, day)
     select 'bench', * from unnest($1::text[], $2::uuid[], $3::text[], $4::bigint[], $5::date[])
     on conflict do nothing`,
    [
      records.map((r) => r.id),
      records.map((r) => r.projectId),
      records.map((r) => r.metric),
      records.map((r) => r.value),
      records.map(() => day),
    ],
  );
  return rowCount ?? 0;
}

const api = config.mode === 'service' ? new Pool(config.url, { connections: config.connections }) : undefined;
const pool =
  config.mode === 'raw' ? new pg.Pool({ connectionString: config.url, max: config.connections }) : undefined;
await pool?.query(`create table if not exists bench_usage (
  capability text not null, id text not null, project_id uuid not null, metric text not null,
  value bigint not null, day date not null, primary key (capability, id))`);
const send = (records: ReturnType<typeof batchOf>) =>
  api ? viaService(records, api) : viaSql(records, pool as pg.Pool);

const latencies: number[] = [];
let errors = 0;
let accepted = 0;
const deadline = performance.now() + config.duration * 1000;
await Promise.all(
  Array.from({ length: config.connections }, async () => {
    while (performance.now() < deadline) {
      const records = batchOf();
      const started = performance.now();
      try {
        const counted = await send(records); // (not `accepted += await …`: that adds to a stale total)
        accepted += counted;
        latencies.push(performance.now() - started);
      } catch {
        errors++;
      }
    }
  }),
);
await api?.close();
await pool?.end();
const batches = summary(latencies, errors, config.duration);
console.log(JSON.stringify({ ...batches, rate: batches.rate * config.batch, accepted }));
