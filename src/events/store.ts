import { VERSION } from '../catalogue/store.ts';
import type { Db, SoleWrite } from '../db/database.ts';
import { enqueue, QUEUED_RESULT, type Queued } from '../delivery-store/enqueue.ts';
import { projectHorizon } from '../delivery-store/retention.ts';
import { dispatchInProgress } from '../delivery-store/state.ts';
import { timeOf } from '../lib/ids.ts';
import { filterDocument, filtered, subscribed } from '../lib/patterns.ts';

/**
 * The condition that finds an event by id in its day's partition only (an id of version 7 carries its
 * time), and within its project's retention: `$1` is the project, `$2` the id, `$3` the installation's
 * retention in days; the time, when the id carries one, is `$4`.
 */
const EVENT_BY_ID = (at: Date | null) => `e.project_id = $1 and e.id = $2 ${at ? 'and e.created_at = $4' : ''}
  and e.created_at >= ${projectHorizon('$1', '$3')}`;

const byId = (projectId: string, eventId: string, retentionDays: number) => {
  const at = timeOf(eventId);
  return { condition: EVENT_BY_ID(at), values: [projectId, eventId, retentionDays, ...(at ? [at] : [])] };
};

/** Event $2 of project $1 at $4 as a replay's filters read it (events before migration 0017 kept jsonb). */
const EVENT_DOCUMENT = `(select ${filterDocument('$3', 'coalesce(data::text, data_jsonb::text)')}
                           from events where project_id = $1 and id = $2 and created_at = $4)`;

/** A new event as the outbox writes it. */
export interface NewEventRow {
  projectId: string;
  id: string;
  type: string;
  /** JSON text */
  data: string;
  subjectHmacs: Buffer[];
  orderingKey?: string;
}

/** The event ($1 project, $2 id, $3 type, $4 data, $5 subject tags, $6 ordering key) and its deliveries. */
const OUTBOX = `event as (
    insert into events (project_id, id, type, data, created_at, ordering_key)
    values ($1, $2, $3, $4, uuid_time($2), $6)
    returning id, created_at, data
  ), tags as (
    insert into event_subjects (project_id, subject_hmac, event_id, event_created_at)
    select $1, subject_hmac, event.id, event.created_at from event, unnest($5::bytea[]) as subject_hmac
  ), ${enqueue({
    project: '$1',
    event: 'event.id',
    createdAt: 'event.created_at',
    kind: 'dispatch',
    orderingKey: '$6::text',
    from: 'event, webhook_endpoints w',
    // The document from the row inserted, not from $4: a custom plan would build it from the parameter
    // as it plans, for every publish, filters or not.
    where: `${subscribed('$1', '$3')} and ${filtered(`(select ${filterDocument('$3', 'e.data')} from event e)`)}`,
  })}`;

/** A test event ($3, of type $5 with data $4) and its one delivery to endpoint $2 of project $1, if it has it. */
const TEST_OUTBOX = `endpoint as (
    select id from webhook_endpoints where project_id = $1 and id = $2
  ), event as (
    insert into events (project_id, id, type, data, created_at)
    select $1, $3, $5, $4, uuid_time($3) from endpoint
    returning id, created_at
  ), ${enqueue({
    project: '$1',
    event: 'event.id',
    createdAt: 'event.created_at',
    kind: 'test',
    orderingKey: 'null::text',
    from: 'event, webhook_endpoints w',
    where: 'w.project_id = $1 and w.id = $2',
  })}`;

/** A test event: core.webhook.test, or an example of a type of the catalogue. */
export interface TestEvent {
  type: string;
  data: unknown;
}

const testValues = (projectId: string, endpointId: string, eventId: string, test: TestEvent) => [
  projectId,
  endpointId,
  eventId,
  JSON.stringify(test.data),
  test.type,
];

const outboxValues = (event: NewEventRow) => [
  event.projectId,
  event.id,
  event.type,
  event.data,
  event.subjectHmacs,
  event.orderingKey ?? null,
];

export const eventStore = (db: Db) => ({
  /**
   * The outbox, in one statement: the event, its subject tags, one delivery per subscribed active endpoint,
   * and a notification that PostgreSQL sends only if the surrounding transaction commits. The event's time
   * is the one its id carries; its deliveries' ids carry it too.
   */
  async insert(event: NewEventRow): Promise<Queued> {
    const { rows } = await db.query<Queued>({
      name: 'event-insert',
      text: `with ${OUTBOX} select ${QUEUED_RESULT} from queued`,
      values: outboxValues(event),
    });
    return rows[0] as Queued;
  },

  /**
   * The outbox as a sole write, predicted to queue `deliveries`, none of them in an ordered lane, and to
   * find the type's declaration at `version` (null: undeclared), whose schema the data was checked against.
   */
  insertSole: (event: NewEventRow, deliveries: number, version: number | null): SoleWrite => ({
    name: 'event-insert-sole',
    together: {}, // it only inserts (and reads)
    ctes: OUTBOX,
    check: `(select count(*) = $7 and count(lane) = 0 from queued)
            and (select ${VERSION} from event_types where project_id = $1 and name = $3) is not distinct from $8::bigint`,
    values: [...outboxValues(event), deliveries, version],
  }),

  /**
   * The event's type and time, and whether a delivery of its first dispatch has not had its first attempt
   * yet; nothing for an event past its project's retention.
   */
  async dispatchState(projectId: string, eventId: string, retentionDays: number) {
    const { condition, values } = byId(projectId, eventId, retentionDays);
    const { rows } = await db.query<{
      type: string;
      created_at: Date;
      ordering_key: string | null;
      in_progress: boolean;
    }>(
      `select e.type, e.created_at, e.ordering_key,
              ${dispatchInProgress('e')} as in_progress
         from events e
        where ${condition}`,
      values,
    );
    return rows[0];
  },

  /** New deliveries of an existing event to the endpoints subscribed now, in the event's partition. */
  async replay(
    projectId: string,
    event: { id: string; type: string; createdAt: Date; orderingKey: string | null },
  ): Promise<Queued> {
    const { rows } = await db.query<Queued>(
      `with ${enqueue({
        project: '$1',
        event: '$2',
        createdAt: '$4',
        kind: 'replay',
        orderingKey: '$5::text',
        from: 'webhook_endpoints w',
        where: `${subscribed('$1', '$3')} and ${filtered(EVENT_DOCUMENT)}`,
      })}
       select ${QUEUED_RESULT} from queued`,
      [projectId, event.id, event.type, event.createdAt, event.orderingKey],
    );
    return rows[0] as Queued;
  },

  /** A core.webhook.test event with one delivery to that endpoint; no delivery when the project has no such endpoint. */
  async insertTest(projectId: string, endpointId: string, eventId: string, test: TestEvent): Promise<Queued> {
    const { rows } = await db.query<Queued>(
      `with ${TEST_OUTBOX} select ${QUEUED_RESULT} from queued`,
      testValues(projectId, endpointId, eventId, test),
    );
    return rows[0] as Queued;
  },

  /** The test event as a sole write, predicted to find the endpoint unordered (an ordered one goes the ordinary way). */
  insertTestSole: (projectId: string, endpointId: string, eventId: string, test: TestEvent): SoleWrite => ({
    name: 'event-insert-test-sole',
    ctes: TEST_OUTBOX,
    check: '(select count(*) = 1 and count(lane) = 0 from queued)',
    values: testValues(projectId, endpointId, eventId, test),
  }),

  /** The event, unless past its project's retention. */
  async find(projectId: string, eventId: string, retentionDays: number) {
    const { condition, values } = byId(projectId, eventId, retentionDays);
    const { rows } = await db.query<{
      id: string;
      type: string;
      /** JSON text, as published */
      data: string;
      created_at: Date;
      redacted_at: Date | null;
    }>(
      `select e.id, e.type, coalesce(e.data::text, e.data_jsonb::text) as data, e.created_at, e.redacted_at
         from events e where ${condition}`,
      values,
    );
    return rows[0];
  },
});
