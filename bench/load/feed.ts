// The usage change feed read from its start to its end, a page of 1,000 after another, for `duration`
// seconds (then from the start again): through the service (GET /capability/v1/usage/changes with the
// cursor it answers), or, as the baseline, the same keyset SELECT of the same rows from a pg client in
// this process. The rate is totals a second.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { Pool } from 'undici';
import { summary } from './summary.ts';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  mode: 'service' | 'raw';
  url: string;
  key?: string;
  duration: number;
};
const PAGE = 1000;

/** One page through the service: its rows and the cursor after them (undefined at the end). */
async function viaService(api: Pool, cursor: string | undefined) {
  const query = new URLSearchParams({ limit: String(PAGE), ...(cursor ? { cursor } : {}) });
  const response = await api.request({
    path: `/capability/v1/usage/changes?${query}`,
    method: 'GET',
    headers: { 'x-api-key': config.key ?? '' },
  });
  if (response.statusCode !== 200) throw new Error(String(response.statusCode));
  const page = (await response.body.json()) as { data: unknown[]; nextCursor: string };
  return { rows: page.data.length, next: page.data.length < PAGE ? undefined : page.nextCursor };
}

type Position = [string, string, string, string, string];
/** One page by the same keyset SELECT: its rows and the position after them. */
async function viaSql(client: pg.Client, after: Position | undefined) {
  const { rows } = await client.query<{ xid: string; p: string; d: string; c: string; m: string }>(
    `select changed_xid::text as xid, project_id as p, to_char(day, 'YYYY-MM-DD') as d, capability as c, metric as m, count
       from usage_daily
      where changed_xid < pg_snapshot_xmin(pg_current_snapshot())
        and ($1::xid8 is null or (changed_xid, project_id, day, capability, metric) > ($1::xid8, $2::uuid, $3::date, $4, $5))
      order by changed_xid, project_id, day, capability, metric limit ${PAGE}`,
    after ?? [null, null, null, null, null],
  );
  const last = rows.at(-1);
  return {
    rows: rows.length,
    next: rows.length < PAGE || !last ? undefined : ([last.xid, last.p, last.d, last.c, last.m] as Position),
  };
}

const api = config.mode === 'service' ? new Pool(config.url, { connections: 1 }) : undefined;
const client = config.mode === 'raw' ? new pg.Client(config.url) : undefined;
await client?.connect();
const latencies: number[] = [];
let rows = 0;
let errors = 0;
const deadline = performance.now() + config.duration * 1000;
let cursor: string | Position | undefined;
while (performance.now() < deadline) {
  const started = performance.now();
  try {
    const page = api
      ? await viaService(api, cursor as string | undefined)
      : await viaSql(client as pg.Client, cursor as Position | undefined);
    rows += page.rows;
    cursor = page.next;
    latencies.push(performance.now() - started);
  } catch {
    errors++;
  }
}
await api?.close();
await client?.end();
console.log(JSON.stringify({ ...summary(latencies, errors, config.duration), rate: rows / config.duration }));
