import type { Db } from '../db/database.ts';
import { timeOf } from '../history/ids.ts';

/** The event type of the test operation, sent to one endpoint only. */
export const TEST_EVENT_TYPE = 'core.webhook.test';

export const DELIVERIES_CHANNEL = 'platform_deliveries';

/** Endpoints of the project subscribed to a type: active, and listing it or `*`. */
const SUBSCRIBED = `w.project_id = $1 and w.active and (w.event_types @> array[$3::text] or w.event_types @> array['*'])`;

/**
 * The condition that finds an event by id in its day's partition only (an id of version 7 carries its
 * time), and within its project's retention: `$1` is the project, `$2` the id, `$3` the installation's
 * retention in days; the time, when the id carries one, is `$4`.
 */
const EVENT_BY_ID = (at: Date | null) => `e.project_id = $1 and e.id = $2 ${at ? 'and e.created_at = $4' : ''}
  and e.created_at >= now() - make_interval(days => coalesce(
        (select retention_days from projects where id = $1), $3::int))`;

const byId = (projectId: string, eventId: string, retentionDays: number) => {
  const at = timeOf(eventId);
  return { condition: EVENT_BY_ID(at), values: [projectId, eventId, retentionDays, ...(at ? [at] : [])] };
};

export const eventStore = (db: Db) => ({
  /**
   * The outbox, in one statement: the event, its subject tags, one delivery per subscribed active endpoint,
   * and a notification that PostgreSQL sends only if the surrounding transaction commits. The event's time
   * is the one its id carries; its deliveries' ids carry it too.
   */
  async insert(event: {
    projectId: string;
    id: string;
    type: string;
    data: unknown;
    subjectHmacs: Buffer[];
  }) {
    const { rows } = await db.query<{ deliveries: number }>({
      name: 'event-insert',
      text: `with event as (
         insert into events (project_id, id, type, data, created_at) values ($1, $2, $3, $4, uuid_time($2))
         returning id, created_at
       ), tags as (
         insert into event_subjects (project_id, subject_hmac, event_id, event_created_at)
         select $1, subject_hmac, event.id, event.created_at from event, unnest($5::bytea[]) as subject_hmac
       ), queued as (
         insert into deliveries (project_id, id, event_id, event_created_at, endpoint_id, kind, next_attempt_at, created_at)
         select $1, uuid_v7_at(event.created_at), event.id, event.created_at, w.id, 'dispatch', now(), now()
           from event, webhook_endpoints w
          where ${SUBSCRIBED}
         returning 1
       )
       select count(*)::int as deliveries,
              case when count(*) > 0 then pg_notify('${DELIVERIES_CHANNEL}', '') end
         from queued`,
      values: [event.projectId, event.id, event.type, JSON.stringify(event.data), event.subjectHmacs],
    });
    return rows[0]?.deliveries ?? 0;
  },

  /**
   * The event's type and time, and whether a delivery of its first dispatch has not had its first attempt
   * yet; nothing for an event past its project's retention.
   */
  async dispatchState(projectId: string, eventId: string, retentionDays: number) {
    const { condition, values } = byId(projectId, eventId, retentionDays);
    const { rows } = await db.query<{ type: string; created_at: Date; in_progress: boolean }>(
      `select e.type, e.created_at,
              exists (select 1 from deliveries d
                       where d.project_id = e.project_id and d.event_id = e.id and d.event_created_at = e.created_at
                         and d.kind = 'dispatch' and d.state = 'pending' and d.attempts = 0) as in_progress
         from events e
        where ${condition}`,
      values,
    );
    return rows[0];
  },

  /** New deliveries of an existing event to the endpoints subscribed now, in the event's partition. */
  async replay(projectId: string, event: { id: string; type: string; createdAt: Date }) {
    const { rows } = await db.query<{ deliveries: number }>(
      `with queued as (
         insert into deliveries (project_id, id, event_id, event_created_at, endpoint_id, kind, next_attempt_at, created_at)
         select $1, uuid_v7_at($4), $2, $4, w.id, 'replay', now(), now()
           from webhook_endpoints w
          where ${SUBSCRIBED}
         returning 1
       )
       select count(*)::int as deliveries,
              case when count(*) > 0 then pg_notify('${DELIVERIES_CHANNEL}', '') end
         from queued`,
      [projectId, event.id, event.type, event.createdAt],
    );
    return rows[0]?.deliveries ?? 0;
  },

  /** A core.webhook.test event with one delivery to that endpoint; false when the project has no such endpoint. */
  async insertTest(projectId: string, endpointId: string, eventId: string, data: unknown) {
    const { rows } = await db.query<{ queued: number }>(
      `with endpoint as (
         select id from webhook_endpoints where project_id = $1 and id = $2
       ), event as (
         insert into events (project_id, id, type, data, created_at)
         select $1, $3, $5, $4, uuid_time($3) from endpoint
         returning id, created_at
       ), queued as (
         insert into deliveries (project_id, id, event_id, event_created_at, endpoint_id, kind, next_attempt_at, created_at)
         select $1, uuid_v7_at(event.created_at), event.id, event.created_at, $2, 'test', now(), now() from event
         returning 1
       )
       select count(*)::int as queued,
              case when count(*) > 0 then pg_notify('${DELIVERIES_CHANNEL}', '') end
         from queued`,
      [projectId, endpointId, eventId, JSON.stringify(data), TEST_EVENT_TYPE],
    );
    return (rows[0]?.queued ?? 0) > 0;
  },

  /** The event, unless past its project's retention. */
  async find(projectId: string, eventId: string, retentionDays: number) {
    const { condition, values } = byId(projectId, eventId, retentionDays);
    const { rows } = await db.query<{
      id: string;
      type: string;
      data: unknown;
      created_at: Date;
      redacted_at: Date | null;
    }>(`select e.id, e.type, e.data, e.created_at, e.redacted_at from events e where ${condition}`, values);
    return rows[0];
  },
});
