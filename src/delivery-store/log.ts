// Reading what happened to deliveries: an event's deliveries, and an endpoint's deliveries with their
// attempts, newest first, a page at a time.
import type { Db } from '../db/database.ts';
import { notFound } from '../lib/errors.ts';
import { type Cursor, encode, type Page, pageFrom } from '../lib/pagination.ts';
import { projectHorizon } from './retention.ts';
import { deliveredAt, deliveredBy, delivering, stateOf } from './state.ts';

export interface DeliveryView {
  id: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  kind: string;
  state: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  waitReason: 'paused' | 'ordered' | 'throttled' | 'retry' | null;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

export interface AttemptView {
  attempt: number;
  startedAt: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  succeeded: boolean;
  responseBody: string | null;
  /** the request's headers as sent, every value that may be a secret as *** */
  requestHeaders: Record<string, string>;
}

/** An attempt as its row keeps it: what it sent beyond the signature's headers by name only. */
type RecordedAttempt = Omit<AttemptView, 'requestHeaders'> & { sentHeaders: string | null };

/**
 * An attempt with its request's headers as sent (contract 0.4): the Standard Webhooks headers (the
 * signature redacted, its timestamp the attempt's start), and the endpoint's own and an OAuth token by
 * name, their values redacted.
 */
function asShown(eventId: string, { sentHeaders, ...attempt }: RecordedAttempt): AttemptView {
  const requestHeaders: Record<string, string> = {
    'content-type': 'application/json',
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(Date.parse(attempt.startedAt) / 1000)),
    'webhook-signature': 'v1,***',
  };
  for (const name of sentHeaders ? sentHeaders.split(',') : [])
    requestHeaders[name] = name === 'authorization' ? 'Bearer ***' : '***';
  return { ...attempt, requestHeaders };
}

/** What the API shows of a delivery `d` and its event `e`, its queue row `q` and its delivering attempt `da`. */
const VIEW = `d.id, d.event_id as "eventId", e.type as "eventType", d.endpoint_id as "endpointId", d.kind,
  ${stateOf('d', 'q')} as state,
  d.attempts + (da.delivered_at is not null)::int as "attemptCount",
  to_char(q.next_attempt_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "nextAttemptAt",
  case when q.delivery_id is null or q.lease_until > now() then null
       when q.held is not null then q.held
       when q.next_attempt_at <= now() then null
       when q.throttled then 'throttled'
       else 'retry' end as "waitReason",
  coalesce(da.status_code, d.last_status) as "lastStatus", case when da.delivered_at is null then d.last_error end as "lastError",
  to_char(coalesce(da.delivered_at, d.delivered_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "deliveredAt",
  to_char(d.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "createdAt"`;

/** A delivery's place in the queue, while it is pending (VIEW reads it as `q`). */
const QUEUED = 'left join delivery_queue q on q.delivery_id = d.id';

/**
 * Every attempt of `d`, newest first, and the one that delivered it (VIEW reads them as `da`), in one
 * read of its attempts: a second lateral join over them planned every day's partition again (docs/decisions/measured-choices.md;
 * `deliveredBy` is for a read whose day is known as it is planned).
 */
const ATTEMPTS = `left join lateral (
    select coalesce(json_agg(json_build_object(
             'attempt', a.attempt,
             'startedAt', to_char(a.started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
             'durationMs', a.duration_ms, 'statusCode', a.status_code, 'error', a.error,
             'succeeded', a.succeeded, 'responseBody', a.response_body, 'sentHeaders', a.sent_headers)
           order by a.attempt desc), '[]') as attempts,
           max(a.status_code) filter (where ${delivering('d', 'a')}) as status_code,
           max(${deliveredAt('a')}) filter (where ${delivering('d', 'a')}) as delivered_at
      from delivery_attempts a
     where a.project_id = d.project_id and a.delivery_id = d.id and a.event_created_at = d.event_created_at) da on true`;

/** An event of the project's log, with its deliveries counted by state. */
export interface EventSummary {
  id: string;
  type: string;
  createdAt: string;
  redacted: boolean;
  deliveries: { total: number; pending: number; delivered: number; dead: number; cancelled: number };
}

export interface EventFilter {
  type?: string;
  state?: string;
  since?: string;
  until?: string;
}

/** The most events a request to the project's event log reads (its filters apply to those). */
export const SCANNED_EVENTS = 2000;

export const deliveryLog = (db: Db, retentionDays: number) => ({
  /** The deliveries of an event (its time picks its day's partition). */
  async ofEvent(projectId: string, eventId: string, eventCreatedAt: Date) {
    const { rows } = await db.query<DeliveryView>(
      `select ${VIEW} from deliveries d
         join events e on e.project_id = d.project_id and e.id = d.event_id and e.created_at = d.event_created_at
         ${QUEUED}
        ${deliveredBy('d')}
        where d.project_id = $1 and d.event_id = $2 and d.event_created_at = $3
        order by d.created_at, d.id`,
      [projectId, eventId, eventCreatedAt],
    );
    return rows;
  },

  /** A page of the endpoint's deliveries with their attempts, newest first; one more than asked tells if more exist. */
  /** A page of the endpoint's deliveries within its project's retention (retentionDays: the installation's). */
  async ofEndpoint(
    projectId: string,
    endpointId: string,
    { limit, after }: Page,
    only: { state?: string; eventType?: string } = {},
  ) {
    const { rowCount } = await db.query(`select 1 from webhook_endpoints where project_id = $1 and id = $2`, [
      projectId,
      endpointId,
    ]);
    if (rowCount !== 1) throw notFound('webhook endpoint');
    // The page is picked from the deliveries alone (one index scan per day, merged in order, stopping at
    // the limit), and only its rows are joined to their events and attempts: joined first, the planner
    // misjudges the join across days and hashes the endpoint's whole history (measured by bench growth).
    const { rows } = await db.query<DeliveryView & { attempts: RecordedAttempt[] }>(
      `with page as materialized (
         select * from deliveries d
          where d.project_id = $1 and d.endpoint_id = $2
            and d.event_created_at >= ${projectHorizon('$1', '$6')}
            and ($3::timestamptz is null or (d.created_at, d.id) < ($3::timestamptz, $4::uuid))
            and ($7::text is null or ${stateOf('d')} = $7)
            and ($8::text is null or exists (
                  select from events e
                   where e.project_id = d.project_id and e.id = d.event_id
                     and e.created_at = d.event_created_at and e.type = $8))
          order by d.created_at desc, d.id desc
          limit $5
       )
       select ${VIEW}, da.attempts
         from page d
         join events e on e.project_id = d.project_id and e.id = d.event_id and e.created_at = d.event_created_at
         ${QUEUED} ${ATTEMPTS}
        order by d.created_at desc, d.id desc`,
      [
        projectId,
        endpointId,
        after?.at ?? null,
        after?.id ?? null,
        limit + 1,
        retentionDays,
        only.state ?? null,
        only.eventType ?? null,
      ],
    );
    const shown = rows.map((row) => ({ ...row, attempts: row.attempts.map((a) => asShown(row.eventId, a)) }));
    return pageFrom(shown, limit, (row) => ({ at: row.createdAt, id: row.id }));
  },

  /**
   * A page of the project's events, newest first (an id carries its event's time, so id order is time
   * order: the primary key's index of each day, merged), each with its deliveries counted by state.
   * A filter by type or state is applied to at most SCANNED_EVENTS events a request: a rare type in a long
   * history would otherwise read the whole of it. A page that found fewer matches than asked within them
   * still has a nextCursor (the oldest event read) when the history goes on.
   */
  async ofProject(projectId: string, { limit, after }: Page, only: EventFilter = {}) {
    // Unfiltered, every event read is on the page: read no more than the page (and one to know of more).
    const scan = only.type || only.state ? SCANNED_EVENTS : limit + 1;
    const { rows } = await db.query<{ scanned: number; oldest: Cursor | null; page: EventSummary[] }>(
      `with scanned as materialized (
         select e.project_id, e.id, e.type, e.created_at, e.redacted_at from events e
          where e.project_id = $1
            and e.created_at >= greatest(${projectHorizon('$1', '$2')}, coalesce($3::timestamptz, '-infinity'))
            and ($4::timestamptz is null or e.created_at < $4)
            and ($5::timestamptz is null or (e.created_at <= $5 and e.id < $6::uuid))
          order by e.id desc
          limit $10
       ), page as materialized (
         select * from scanned e
          where ($7::text is null or e.type = $7)
            and ($8::text is null or exists (
                  select from deliveries d
                   where d.project_id = e.project_id and d.event_id = e.id
                     and d.event_created_at = e.created_at and ${stateOf('d')} = $8))
          order by e.id desc
          limit $9
       ), summaries as (
         select e.id, e.type, e.redacted_at is not null as redacted,
                to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt",
                json_build_object('total', count(d.id),
                  'pending', count(d.id) filter (where d.state = 'pending'),
                  'delivered', count(d.id) filter (where d.state = 'delivered'),
                  'dead', count(d.id) filter (where d.state = 'dead'),
                  'cancelled', count(d.id) filter (where d.state = 'cancelled')) as deliveries
           from page e
           left join (select d.project_id, d.id, d.event_id, d.event_created_at, ${stateOf('d')} as state
                        from deliveries d) d
             on d.project_id = e.project_id and d.event_id = e.id and d.event_created_at = e.created_at
          group by e.id, e.type, e.created_at, e.redacted_at
       )
       select (select count(*) from scanned)::int as scanned,
              (select json_build_object('id', id,
                        'at', to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                 from scanned order by id limit 1) as oldest,
              coalesce((select json_agg(s order by s.id desc) from summaries s), '[]') as page`,
      [
        projectId,
        retentionDays,
        only.since ?? null,
        only.until ?? null,
        after?.at ?? null,
        after?.id ?? null,
        only.type ?? null,
        only.state ?? null,
        limit + 1,
        scan,
      ],
    );
    const { scanned, oldest, page } = rows[0] ?? { scanned: 0, oldest: null, page: [] };
    const found = pageFrom(page, limit, (row) => ({ at: row.createdAt, id: row.id }));
    // Fewer than a page among all the events read, and more may follow: go on from the oldest one read.
    if (!found.nextCursor && scanned === SCANNED_EVENTS && oldest)
      return { ...found, nextCursor: encode(oldest) };
    return found;
  },
});

export type DeliveryLog = ReturnType<typeof deliveryLog>;
