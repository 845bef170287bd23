// Ordered delivery. An endpoint ordered as a whole has one lane (''); one ordered by key has a lane per
// ordering key (events without a key are not ordered). In a lane, only the head (the pending delivery
// created first, by seq) is in the queue; the others are held ('ordered') until every one before them is
// delivered or dead. A worker that claims a head may lease the run of deliveries behind it and send them
// one at a time (worker.ts), so a lane never has two deliveries in flight.
//
// Who goes next is decided by promote, and only under the endpoint's lane lock: every transaction that
// changes which of an ordered endpoint's deliveries are pending or held (an insert, the completion of an
// attempt, a cancel, a pause or resume, a change of ordering) takes the lock before touching a delivery and
// keeps it until it commits, so each sees what the others committed and no lane is left without a head.
import type { Db } from '../db/database.ts';
import { DELIVERIES_CHANNEL } from './channel.ts';

/** The first key of the lane locks' advisory lock (the second is the endpoint id's hash). */
export const LANE_LOCK = 7310012;

export interface Lane {
  projectId: string;
  endpointId: string;
  lane: string;
}

/** A lane expression for a delivery of endpoint `w` of an event whose ordering key is `key` (SQL). */
export const laneOf = (key: string) => `case w.ordering when 'endpoint' then '' when 'key' then ${key} end`;

/** Takes the lane locks of these endpoints (in one order, so two takers never wait on each other). */
export async function lockLanes(db: Db, endpointIds: Iterable<string>) {
  const ids = [...new Set(endpointIds)].sort();
  if (ids.length === 0) return;
  await db.query(
    `select pg_advisory_xact_lock(${LANE_LOCK}, hashtext(id)) from unnest($1::text[]) with ordinality as t(id, n)
      order by n`,
    [ids],
  );
}

/**
 * Puts the head of each lane in the queue (or holds it, when its endpoint is paused) if it is still held
 * behind a delivery that is no longer pending. Run under the lanes' locks; wakes the workers if one is
 * there to claim.
 */
export async function promote(db: Db, lanes: Lane[]) {
  if (lanes.length === 0) return;
  await db.query(
    `with heads as (
       select q.delivery_id
         from unnest($1::uuid[], $2::uuid[], $3::text[]) as l(project_id, endpoint_id, lane)
        cross join lateral (
          select q.delivery_id, q.held from delivery_queue q
           where q.endpoint_id = l.endpoint_id and q.lane = l.lane and q.project_id = l.project_id
           order by q.seq limit 1) q
        where q.held = 'ordered'
     ), promoted as (
       update delivery_queue q set held = case when w.paused then 'paused' end
         from heads h, webhook_endpoints w
        where q.delivery_id = h.delivery_id and w.project_id = q.project_id and w.id = q.endpoint_id
       returning q.held, q.lease_until
     )
     -- A head already leased (the run of the worker that sends this lane) needs nobody woken.
     select pg_notify('${DELIVERIES_CHANNEL}', '')
       from (select 1 from promoted where held is null and (lease_until is null or lease_until < now()) limit 1)
            as any_queued`,
    [lanes.map((l) => l.projectId), lanes.map((l) => l.endpointId), lanes.map((l) => l.lane)],
  );
}

/** Locks and promotes lanes that new deliveries joined (their rows are the inserting transaction's own). */
export async function settle(db: Db, lanes: Lane[]) {
  if (lanes.length === 0) return;
  await lockLanes(
    db,
    lanes.map((l) => l.endpointId),
  );
  await promote(db, lanes);
}

/** settle, for the lanes of one project a statement reported as `[endpointId, lane]` pairs. */
export const settleLanes = (db: Db, projectId: string, lanes: [string, string][]) =>
  settle(
    db,
    lanes.map(([endpointId, lane]) => ({ projectId, endpointId, lane })),
  );

/** How a new delivery in lane `l.lane` waits: behind its lane's head, until promote says otherwise. */
export const HELD_IN_LANE = `case when l.lane is not null then 'ordered' end`;

/**
 * After an endpoint's ordering or pause changed (under its lane lock): every pending delivery gets the lane
 * of the endpoint's ordering now, and is held behind the head of its lane, or for the pause, or queued.
 * Deliveries in flight finish as they started.
 */
export async function relane(db: Db, projectId: string, endpointId: string) {
  await db.query(
    `with pending as (
       select q.delivery_id, l.lane,
              row_number() over (partition by l.lane order by q.seq) as place,
              w.paused
         from delivery_queue q
         join webhook_endpoints w on w.project_id = q.project_id and w.id = q.endpoint_id
         join events e on e.project_id = q.project_id and e.id = q.event_id and e.created_at = q.event_created_at
        cross join lateral (select ${laneOf('e.ordering_key')} as lane) l
        where q.endpoint_id = $2 and q.project_id = $1
     ), changed as (
       update delivery_queue q
          set lane = p.lane,
              held = case when p.lane is not null and p.place > 1 then 'ordered' when p.paused then 'paused' end
         from pending p
        where q.delivery_id = p.delivery_id
       returning q.held
     )
     select pg_notify('${DELIVERIES_CHANNEL}', '') from (select 1 from changed where held is null limit 1) as any_queued`,
    [projectId, endpointId],
  );
}

/**
 * Holds an endpoint's queued deliveries for its pause, or puts back in the queue what its pause held
 * (under its lane lock). Deliveries in flight finish; the workers let go of what they hold unsent, which
 * their next claim holds (it sees the endpoint paused).
 */
export async function holdForPause(db: Db, projectId: string, endpointId: string, paused: boolean) {
  await db.query(
    `with changed as (
       update delivery_queue set held = case when $3 then 'paused' end
        where endpoint_id = $2 and project_id = $1
          and held is not distinct from case when $3 then null else 'paused' end
          and (not $3 or lease_until is null or lease_until < now())
       returning 1
     )
     select pg_notify('${DELIVERIES_CHANNEL}', case when $3 then $2::text else '' end)`,
    [projectId, endpointId, paused],
  );
}
