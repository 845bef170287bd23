// A delivery's state, as every reader of the history derives it. The recorder writes nothing to a
// delivery's history row when an attempt succeeds, the common outcome by far: it deletes the queue row and
// appends the attempt row, and that is all (docs/decisions/appended-delivered.md). Every other change of
// state is written to the row: a retry, a death, a cancel, the retention's horizon, a retry by hand. So a
// row that still says 'pending' and has no queue row left was delivered, by its attempt number
// `attempts + 1`. The queue row and the attempt row are written and removed by one statement, so a
// statement's snapshot never sees one without the other.

/**
 * The state of the history row `d` (an alias): pending, delivered, dead or cancelled. `queued`: the alias
 * of its queue row where the statement joins it already; else the queue is probed.
 */
export const stateOf = (d: string, queued?: string) =>
  `case when ${d}.state <> 'pending' then ${d}.state
        when ${queued ? `${queued}.delivery_id is not null` : `exists (select from delivery_queue dq where dq.delivery_id = ${d}.id)`} then 'pending'
        else 'delivered' end`;

/** Whether attempt `a` is the one that delivered `d` and was not written to `d`'s row. */
export const delivering = (d: string, a: string) =>
  `${d}.state = 'pending' and ${a}.attempt = ${d}.attempts + 1 and ${a}.succeeded`;

/** When attempt `a` delivered: the moment its answer arrived. */
export const deliveredAt = (a: string) =>
  `${a}.started_at + make_interval(secs => ${a}.duration_ms / 1000.0)`;

/**
 * The attempt that delivered `d`, when its row was not written by it, as a lateral join `da` (its
 * status_code and its delivered_at); no row for any other delivery. One probe of the attempts' primary key.
 */
export const deliveredBy = (d: string) => `left join lateral (
    select da.status_code, ${deliveredAt('da')} as delivered_at
      from delivery_attempts da
     where da.project_id = ${d}.project_id and da.delivery_id = ${d}.id
       and da.event_created_at = ${d}.event_created_at and ${delivering(d, 'da')}) da on true`;

/**
 * Whether event `e`'s first dispatch is still under way: a delivery of it made when it was published is
 * pending and not yet attempted (an idempotent publish answered again says so).
 */
export const dispatchInProgress = (e: string) =>
  `exists (select 1 from deliveries d
            where d.project_id = ${e}.project_id and d.event_id = ${e}.id and d.event_created_at = ${e}.created_at
              and d.kind = 'dispatch' and ${stateOf('d')} = 'pending' and d.attempts = 0)`;

/**
 * A CTE, `attempts_redacted`: the captured responses of the attempts at delivering the events `from` finds
 * (a CTE or table with its alias; `project`, `event` and `createdAt` name each event's key in it) are
 * forgotten, since a receiver's answer may echo the payload. For an erasure and a short retention.
 */
export const redactResponses = (o: { from: string; project: string; event: string; createdAt: string }) =>
  `attempts_redacted as (
     update delivery_attempts a set response_body = null
       from deliveries d, ${o.from}
      where d.project_id = ${o.project} and d.event_id = ${o.event} and d.event_created_at = ${o.createdAt}
        and a.project_id = d.project_id and a.delivery_id = d.id and a.event_created_at = d.event_created_at
        and a.response_body is not null
   )`;
