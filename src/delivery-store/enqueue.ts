// The queue's side of the outbox: the one statement shape that puts deliveries in the queue (for an event
// published, replayed, tested, recovered, or the platform's own), and the ways deliveries leave it before
// they are sent (cancelled, let go of, their rate slots forgotten). Events, endpoints and recovery call
// these; the delivery worker leases what they queue.
import type { Db } from '../db/database.ts';
import { DELIVERIES_CHANNEL } from './channel.ts';
import { HELD_IN_LANE, laneOf, lockLanes } from './lanes.ts';

/**
 * What an insert of deliveries answers: how many, and the ordered lanes they joined ([endpoint, lane]).
 * The workers are woken after the commit (wake.ts), not by a NOTIFY in the statement.
 */
export interface Queued {
  deliveries: number;
  /** the ordered lanes that gained a delivery, as [endpointId, lane] */
  lanes: [string, string][];
}

/** Queued, from the `queued` CTE an enqueue statement returns into. */
export const QUEUED_RESULT = `count(*)::int as deliveries,
       coalesce(jsonb_agg(distinct jsonb_build_array(endpoint_id, lane)) filter (where lane is not null), '[]') as lanes`;

/**
 * Two CTEs, `queued` and `queued_history`: one delivery per endpoint `w` found by `from` and `where`
 * (SQL), of the event whose project, id and time are the expressions given, put in the queue and in the
 * history, in the lane its ordering key makes (in an ordered lane it waits behind the lane's head until
 * promote, lanes.ts, says otherwise). `queued` returns each one's project_id, endpoint_id and lane.
 */
export const enqueue = (o: {
  project: string;
  event: string;
  createdAt: string;
  kind: 'dispatch' | 'test' | 'replay';
  orderingKey: string;
  from: string;
  where: string;
}) => `queued as (
    insert into delivery_queue (delivery_id, project_id, event_id, event_created_at, endpoint_id, lane, held)
    select uuid_v7_at(${o.createdAt}), ${o.project}, ${o.event}, ${o.createdAt}, w.id, l.lane, ${HELD_IN_LANE}
      from ${o.from} cross join lateral (select ${laneOf(o.orderingKey)} as lane) l
     where ${o.where}
    returning delivery_id, project_id, event_id, event_created_at, endpoint_id, lane
  ), queued_history as (
    insert into deliveries (project_id, id, event_id, event_created_at, endpoint_id, kind, created_at)
    select project_id, delivery_id, event_id, event_created_at, endpoint_id, '${o.kind}', now() from queued
  )`;

/** SQL: how many of endpoint row `w`'s deliveries are pending (its queue rows). */
export const waitingOf = (w: string) =>
  `(select count(*)::int from delivery_queue q where q.endpoint_id = ${w}.id and q.project_id = ${w}.project_id)`;

/**
 * CTEs: the pending deliveries that `find` finds (of delivery_queue) leave the queue, cancelled for the
 * reason `$3`; `cancelled` returns them.
 */
const cancel = (find: string) => `cancelling as (${find}), cancelled as (
       delete from delivery_queue q using cancelling c where q.delivery_id = c.delivery_id
       returning q.project_id, q.delivery_id, q.event_created_at
     ), cancelled_history as (
       update deliveries d set state = 'cancelled', last_error = $3
         from cancelled c
        where d.project_id = c.project_id and d.id = c.delivery_id and d.event_created_at = c.event_created_at
     )`;

/**
 * Cancels an endpoint's pending deliveries, held by a worker or not, and tells every worker to drop the
 * ones it holds (NOTIFY with the endpoint's id, sent at commit). An attempt in flight is still recorded
 * when it ends (store.ts). The one way an endpoint's deliveries are cancelled: by its
 * owner, on deletion, and when it is disabled. Takes the endpoint's lane lock (lanes.ts). How many.
 */
export async function cancelPending(
  db: Db,
  projectId: string,
  endpointId: string,
  reason: string,
  except: string | null = null,
) {
  await lockLanes(db, [endpointId]);
  const { rows } = await db.query<{ cancelled: number }>(
    `with ${cancel(`select * from delivery_queue
                     where endpoint_id = $2 and project_id = $1 and delivery_id is distinct from $4`)}
     select count(*)::int as cancelled,
            case when count(*) > 0 then pg_notify('${DELIVERIES_CHANNEL}', $2::text) end
       from cancelled`,
    [projectId, endpointId, reason, except],
  );
  return rows[0]?.cancelled ?? 0;
}

/**
 * The CTEs that cancel in a deletion's sole write (`$1` project, `$2` endpoint, `$3` reason), once `gone`
 * deleted it.
 */
export const CANCEL_WITH_DELETION = cancel(
  'select * from delivery_queue where endpoint_id = $2 and project_id = $1 and exists (select from gone)',
);

/** Tells every worker to let go of what it holds of the endpoint and has not sent (it was paused). */
export async function releaseHeld(db: Db, endpointId: string) {
  await db.query(`select pg_notify('${DELIVERIES_CHANNEL}', $1::text)`, [endpointId]);
}

/** Frees the slots an endpoint's deliveries hold (its rate changed): they take new ones when next claimed. */
export async function forgetSlots(db: Db, projectId: string, endpointId: string) {
  await db.query(
    `update delivery_queue set next_attempt_at = now(), throttled = false
      where endpoint_id = $2 and project_id = $1 and throttled`,
    [projectId, endpointId],
  );
}
