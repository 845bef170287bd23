// queue-models: what each data model of the delivery queue (bench/queue/models.ts) costs PostgreSQL per
// delivery, measured side by side on one server, rounds rotated, today's model the baseline. A round
// publishes DELIVERIES deliveries one event per statement (the common case: an event to one endpoint),
// then drains them as the worker does: leases of CLAIM, recorded in batches of the same size (the
// recorder's), one connection, no send. It answers "which model", not "how fast is the service":
// the claim's shares, lanes and pacing, and the send, are the same in every model and left out.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { DATA } from './delivery.ts';
import type { BenchResult, Check, Figure } from './lib.ts';
import { spread } from './lib.ts';
import { postgresCpu } from './peers/cpu.ts';
import { MODELS, type Model } from './queue/models.ts';
import { migrated } from './seed.ts';

const DELIVERIES = 20_000;
const CLAIM = 200;
const ROUNDS = 3;
/** The events' schema and every model's, dropped before and after a run. */
const DROP_SCHEMAS = `drop schema if exists qm, ${MODELS.map((m) => m.name).join(', ')} cascade`;

interface Sample {
  publishUs: number;
  drainUs: number;
  drainRate: number;
}

export async function queueModels(databaseUrl: string): Promise<BenchResult> {
  await migrated(databaseUrl); // for uuid_v7_at
  const client = new pg.Client(databaseUrl);
  await client.connect();
  const cpu = await postgresCpu(databaseUrl);
  const checks: Check[] = [];
  try {
    const events = await setUp(client);
    const samples = new Map<string, Sample[]>(MODELS.map((m) => [m.name, []]));
    for (const model of MODELS) await round(client, cpu, model, events); // warm-up
    for (let i = 0; i < ROUNDS; i++) {
      // Each round in another order, so no model always follows the same one.
      const order = MODELS.map((_, j) => MODELS[(i + j) % MODELS.length] as Model);
      for (const model of order) {
        const { sample, check } = await round(client, cpu, model, events);
        samples.get(model.name)?.push(sample);
        if (!check.ok) checks.push(check);
      }
    }
    if (checks.length === 0) checks.push({ name: 'every model recorded every delivery once', ok: true });
    return { name: 'queue-models', figures: figures(samples), checks, errors: { failed: 0, total: 0 } };
  } finally {
    await client.query(DROP_SCHEMAS);
    await client.end();
  }
}

/** The schemas, and DELIVERIES events in `qm.events` (of one project, published now). */
async function setUp(client: pg.Client) {
  await client.query(DROP_SCHEMAS);
  await client.query(`create schema qm; create table qm.events (project_id uuid not null, id uuid not null,
    type text not null, data jsonb not null, created_at timestamptz not null, primary key (project_id, id, created_at))`);
  for (const model of MODELS) await client.query(`create schema ${model.name}; ${model.setup}`);
  const projectId = randomUUID();
  const { rows } = await client.query<{ id: string; created_at: Date }>(
    `insert into qm.events (project_id, id, type, data, created_at)
     select $1, uuid_v7_at(t), 'order.created', $2, t
       from generate_series(1, $3) n cross join lateral (select date_trunc('milliseconds', now()) as t) t
     returning id, created_at`,
    [projectId, JSON.stringify(DATA), DELIVERIES],
  );
  return { projectId, endpointId: randomUUID(), rows };
}

async function round(
  client: pg.Client,
  cpu: () => number,
  model: Model,
  events: Awaited<ReturnType<typeof setUp>>,
) {
  const { rows } = await client.query<{ tables: string }>(
    `select string_agg(format('%I.%I', schemaname, tablename), ', ') as tables from pg_tables where schemaname = $1`,
    [model.name],
  );
  await client.query(`truncate ${rows[0]?.tables}`);
  await client.query(`vacuum analyze ${rows[0]?.tables}`);
  const publishStart = cpu();
  for (const e of events.rows)
    await client.query({
      name: `${model.name}-publish`,
      text: model.publish,
      values: [events.projectId, [e.id], [e.created_at], events.endpointId],
    });
  const publishUs = cpu() - publishStart;
  const drainStart = cpu();
  const started = performance.now();
  const token = randomUUID();
  let recorded = 0;
  for (;;) {
    const claimed = await lease(client, model, token);
    if (claimed.length === 0) break;
    const done = await client.query({
      name: `${model.name}-record`,
      text: model.record,
      values: [events.projectId, claimed.map((c) => c.id), claimed.map((c) => c.event_created_at), token],
    });
    recorded += done.rowCount ?? 0;
  }
  const seconds = (performance.now() - started) / 1000;
  const drainUs = cpu() - drainStart;
  return {
    sample: {
      publishUs: publishUs / DELIVERIES,
      drainUs: drainUs / DELIVERIES,
      drainRate: DELIVERIES / seconds,
    },
    check: {
      name: `${model.name}: every delivery recorded once`,
      ok: recorded === DELIVERIES,
      detail: `${recorded} of ${DELIVERIES}`,
    },
  };
}

/** One claim in one transaction, as the worker's: the due rows leased, with their events' data. */
async function lease(client: pg.Client, model: Model, token: string) {
  await client.query('begin');
  try {
    let values: unknown[] = [CLAIM, token];
    if (model.due) {
      const due = await client.query({ name: `${model.name}-due`, text: model.due, values: [CLAIM] });
      if (due.rows.length === 0) return [];
      values = [...values, ...['project_id', 'id', 'event_created_at'].map((k) => due.rows.map((r) => r[k]))];
    }
    const { rows } = await client.query<{ id: string; event_created_at: Date; data: string }>({
      name: `${model.name}-lease`,
      text: model.lease,
      values,
    });
    if (rows.some((r) => r.data.length < 1000))
      throw new Error(`${model.name}: a claim lost its event's data`);
    return rows;
  } finally {
    await client.query('commit');
  }
}

function figures(samples: Map<string, Sample[]>): Figure[] {
  const base = samples.get('today') ?? [];
  const out: Figure[] = [];
  for (const [name, mine] of samples) {
    if (name === 'today') continue;
    const side = (s: Sample[]) => ({
      publishUs: Math.round(spread(s.map((x) => x.publishUs)).median * 10) / 10,
      drainUs: Math.round(spread(s.map((x) => x.drainUs)).median * 10) / 10,
      drainRate: Math.round(spread(s.map((x) => x.drainRate)).median),
    });
    const ratio = (pick: (s: Sample) => number) =>
      spread(mine.map((s, i) => pick(s) / pick(base[i] as Sample)));
    out.push(
      {
        name: `${name} vs today: PostgreSQL CPU per delivery, claim and record`,
        ratio: ratio((s) => s.drainUs),
        subject: side(mine),
        baseline: side(base),
      },
      { name: `${name} vs today: PostgreSQL CPU per delivery, publish`, ratio: ratio((s) => s.publishUs) },
      { name: `${name} vs today: drain rate`, ratio: ratio((s) => s.drainRate) },
    );
  }
  return out;
}
