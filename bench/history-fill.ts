// History made in bulk for the growth benchmark, with SQL generate_series (not through the API): events of
// ~300 bytes, each delivered to every endpoint of its project after three attempts (two refused with a 503,
// the third answered 200), as the partitioned tables hold them (migration 0011) and as the recorder leaves
// them: the row as its second failure wrote it, the third attempt alone saying it was delivered
// (docs/decisions/appended-delivered.md). A chunk at a time so no statement holds millions of rows in
// memory. And the same history in the tables as they were before partitioning (migration 0010), to time
// the migration that moves it.
import type pg from 'pg';

export const DATA = JSON.stringify({
  amount: 1999,
  currency: 'EUR',
  customer: 'cus_4EIXzoTnkbZg9J7G',
  description: 'Order 42: two books and a lamp, delivered to the office on the third floor',
  metadata: { channel: 'web', campaign: 'autumn', note: 'x'.repeat(120) },
});
export const ATTEMPTS_PER_DELIVERY = 3;
const CHUNK_DELIVERIES = 300_000;

/**
 * Adds `deliveries` deliveries (a third as many events, to three endpoints; three attempts each) with
 * times spread evenly from `from` to `to`.
 */
export async function fillHistory(
  client: pg.Client,
  projectId: string,
  endpointIds: string[],
  deliveries: number,
  from: Date,
  to: Date,
): Promise<void> {
  const chunks = Math.max(1, Math.ceil(deliveries / CHUNK_DELIVERIES));
  const span = (to.getTime() - from.getTime()) / chunks;
  for (let i = 0; i < chunks; i++) {
    const events = Math.round(deliveries / chunks / endpointIds.length);
    await client.query(
      `with e as (
         insert into events (project_id, id, type, data, created_at)
         select $1, uuid_v7_at(t), 'pay.payment.succeeded', $6::jsonb, t
           from (select date_trunc('milliseconds', $3::timestamptz + ($4::float8 * n / $5) * interval '1 millisecond') as t
                   from generate_series(0, $5 - 1) n) s
         returning id, created_at
       ), d as (
         insert into deliveries (project_id, id, event_id, event_created_at, endpoint_id, kind, state, attempts,
                                 last_status, delivered_at, created_at)
         select $1, uuid_v7_at(e.created_at), e.id, e.created_at, w, 'dispatch', 'pending', 2, 503, null, e.created_at
           from e cross join unnest($2::uuid[]) w
         returning id, event_created_at
       )
       insert into delivery_attempts (project_id, delivery_id, event_created_at, attempt, started_at, duration_ms,
                                      status_code, succeeded, response_body)
       select $1, d.id, d.event_created_at, a, d.event_created_at + a * interval '1 minute', 40,
              case when a < 3 then 503 else 200 end, a = 3, case when a < 3 then 'busy' else 'ok' end
         from d cross join generate_series(1, 3) a`,
      [projectId, endpointIds, new Date(from.getTime() + i * span), span, events, DATA],
    );
  }
}

/** The same shape of history in the tables of migration 0010 (ids of version 4, defaults for the rest). */
export async function fillLegacyHistory(
  client: pg.Client,
  projectId: string,
  deliveries: number,
  days: number,
) {
  const events = Math.round(deliveries / 3);
  await client.query(
    `with e as (
       insert into events (project_id, type, data, created_at)
       select $1, 'pay.payment.succeeded', $3::jsonb, now() - ($4::float8 * n / $2) * interval '1 day'
         from generate_series(0, $2 - 1) n
       returning id, created_at
     ), d as (
       insert into deliveries (project_id, event_id, endpoint_id, kind, state, attempts, next_attempt_at, delivered_at, created_at)
       select $1, e.id, w, 'dispatch', 'delivered', 1, e.created_at, e.created_at, e.created_at
         from e cross join (values (gen_random_uuid()), (gen_random_uuid()), (gen_random_uuid())) as endpoints(w)
       returning id, created_at
     )
     insert into delivery_attempts (project_id, delivery_id, attempt, started_at, duration_ms, status_code, succeeded)
     select $1, d.id, 1, d.created_at, 40, 200, true from d`,
    [projectId, events, DATA, days],
  );
}

/** Bytes on disk per row of each history table (partitions, their indexes and TOAST), and the row counts. */
export async function sizing(client: pg.Client) {
  const { rows } = await client.query<{ name: string; bytes: number; count: number }>(
    `select t.name,
            (select coalesce(sum(pg_total_relation_size(i.inhrelid)), 0) from pg_inherits i
              where i.inhparent = t.name::regclass)::bigint as bytes,
            0 as count
       from unnest(array['events', 'deliveries', 'delivery_attempts']) as t(name)`,
  );
  for (const row of rows) {
    const counted = await client.query<{ n: number }>(`select count(*)::bigint as n from ${row.name}`);
    row.count = Number(counted.rows[0]?.n ?? 0);
  }
  return rows.map((r) => ({
    ...r,
    bytes: Number(r.bytes),
    perRow: Math.round(Number(r.bytes) / Math.max(1, r.count)),
  }));
}
