// The statement that ends a claim (claim.ts, apply), in its parts: LEASE and LEASED alone when the claim
// only leases, with DECIDED between them when it also paces, cancels or pushes to a slot. Parameters are
// numbered across the parts: LEASE's $1-$5, LEASED's $6-$7, then DECIDED's $8-$15.

/**
 * The lease: the claimed rows, found where the claim locked them (by ctid: they have not moved), leased
 * until $1 seconds from now to token $2 of holder $3; $4 their ctids, $5 when to send each (epoch seconds).
 */
export const LEASE = `with claimed as (
       update delivery_queue q
          set lease_until = now() + make_interval(secs => $1), lease_token = $2, lease_holder = $3, throttled = false
         from unnest($4::tid[], $5::float8[]) as r(ctid, at)
        where q.ctid = any ($4::tid[]) and q.ctid = r.ctid
       returning q.project_id, q.delivery_id as id, q.event_id, q.event_created_at, q.endpoint_id, q.lane, q.attempts,
                 (r.at * 1000)::float8 as send_at
     )`;

/**
 * What else a claim may decide, after LEASE: the rate-limited endpoints' next free slots ($8 their rows'
 * ctids, $9 the slots), the cancelled deliveries ($10; $11 those whose endpoint is gone, not disabled; $14
 * and $15 bound their days, as $6 and $7 do the leased ones' in LEASED), and the deliveries pushed to their
 * slots ($12, $13 the slots).
 */
export const DECIDED = `, paced as (
       update webhook_endpoints w set rate_next_at = to_timestamp(s.next_free)
         from unnest($8::tid[], $9::float8[]) as s(at, next_free)
        where w.ctid = any ($8::tid[]) and w.ctid = s.at
     ), cancelled as (
       delete from delivery_queue q where q.ctid = any ($10::tid[])
       returning q.project_id, q.delivery_id, q.event_created_at, q.ctid = any ($11::tid[]) as deleted
     ), cancelled_history as (
       update deliveries d
          set state = 'cancelled', last_error = case when c.deleted then 'endpoint deleted' else 'endpoint disabled' end
         from cancelled c
        where d.project_id = c.project_id and d.id = c.delivery_id and d.event_created_at = c.event_created_at
          and d.event_created_at >= $14 and d.event_created_at < $15
     ), pushed as (
       update delivery_queue q set next_attempt_at = to_timestamp(r.at), throttled = true
         from unnest($12::tid[], $13::float8[]) as r(ctid, at)
        where q.ctid = any ($12::tid[]) and q.ctid = r.ctid
     )`;

/**
 * The leased deliveries, with their event's type and payload on each event's first; $6 and $7 bound the
 * days of their events (from the first's day, to the day after the last's). Bounds in parameters let
 * PostgreSQL leave out every other day's partition as the statement starts: the join's own key is known
 * only row by row, so without them it set up a scan of every day's partition of the events at each claim
 * (docs/decisions/claim-fixed-cost.md).
 */
export const LEASED = `select c.*, e.type, e.data
       from (select *, row_number() over (partition by event_id) = 1 as first from claimed) c
       -- Each event by its whole key (a lateral subquery the planner cannot flatten, for its limit): joined
       -- plainly, the planner (which cannot count what the update returns) hashed the project's every
       -- event for each claim. An event is read for its first delivery only (its payload is sent once from
       -- here to the worker). Its endpoint is not read again: the due rows carry what the send needs.
       left join lateral (
         select e.type, coalesce(e.data::text, e.data_jsonb::text) as data from events e
          where c.first and e.project_id = c.project_id and e.id = c.event_id and e.created_at = c.event_created_at
            and e.created_at >= $6 and e.created_at < $7
          limit 1) e on true`;
