import type { Db } from '../db/database.ts';

/** The event type of the test operation, sent to one endpoint only. */
export const TEST_EVENT_TYPE = 'core.webhook.test';

export const DELIVERIES_CHANNEL = 'platform_deliveries';

/** Endpoints of the project subscribed to a type: active, and listing it or `*`. */
const SUBSCRIBED = `w.project_id = $1 and w.active and (w.event_types @> array[$3::text] or w.event_types @> array['*'])`;

export const eventStore = (db: Db) => ({
  /**
   * The outbox, in one statement: the event, its subject tags, one delivery per subscribed active endpoint,
   * and a notification that PostgreSQL sends only if the surrounding transaction commits.
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
         insert into events (project_id, id, type, data) values ($1, $2, $3, $4) returning id
       ), tags as (
         insert into event_subjects (project_id, subject_hmac, event_id)
         select $1, subject_hmac, event.id from event, unnest($5::bytea[]) as subject_hmac
       ), queued as (
         insert into deliveries (project_id, event_id, endpoint_id, kind, next_attempt_at, created_at)
         select $1, event.id, w.id, 'dispatch', now(), now()
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

  /** The event's type, and whether a delivery of its first dispatch has not had its first attempt yet. */
  async dispatchState(projectId: string, eventId: string) {
    const { rows } = await db.query<{ type: string; in_progress: boolean }>(
      `select e.type,
              exists (select 1 from deliveries d
                       where d.project_id = e.project_id and d.event_id = e.id
                         and d.kind = 'dispatch' and d.state = 'pending' and d.attempts = 0) as in_progress
         from events e
        where e.project_id = $1 and e.id = $2`,
      [projectId, eventId],
    );
    return rows[0];
  },

  /** New deliveries of an existing event to the endpoints subscribed now. */
  async replay(projectId: string, eventId: string, type: string) {
    const { rows } = await db.query<{ deliveries: number }>(
      `with queued as (
         insert into deliveries (project_id, event_id, endpoint_id, kind, next_attempt_at, created_at)
         select $1, $2, w.id, 'replay', now(), now()
           from webhook_endpoints w
          where ${SUBSCRIBED}
         returning 1
       )
       select count(*)::int as deliveries,
              case when count(*) > 0 then pg_notify('${DELIVERIES_CHANNEL}', '') end
         from queued`,
      [projectId, eventId, type],
    );
    return rows[0]?.deliveries ?? 0;
  },

  /** A core.webhook.test event with one delivery to that endpoint; false when the project has no such endpoint. */
  async insertTest(projectId: string, endpointId: string, eventId: string, data: unknown) {
    const { rows } = await db.query<{ queued: number }>(
      `with endpoint as (
         select id from webhook_endpoints where project_id = $1 and id = $2
       ), event as (
         insert into events (project_id, id, type, data)
         select $1, $3, $5, $4 from endpoint
         returning id
       ), queued as (
         insert into deliveries (project_id, event_id, endpoint_id, kind, next_attempt_at, created_at)
         select $1, event.id, $2, 'test', now(), now() from event
         returning 1
       )
       select count(*)::int as queued,
              case when count(*) > 0 then pg_notify('${DELIVERIES_CHANNEL}', '') end
         from queued`,
      [projectId, endpointId, eventId, JSON.stringify(data), TEST_EVENT_TYPE],
    );
    return (rows[0]?.queued ?? 0) > 0;
  },

  async find(projectId: string, eventId: string) {
    const { rows } = await db.query<{
      id: string;
      type: string;
      data: unknown;
      created_at: Date;
      redacted_at: Date | null;
    }>(`select id, type, data, created_at, redacted_at from events where project_id = $1 and id = $2`, [
      projectId,
      eventId,
    ]);
    return rows[0];
  },
});
