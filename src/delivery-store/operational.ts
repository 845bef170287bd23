// The platform's own events (core.*): sent to a project's endpoints that ask for them (by name, `core.*`
// or another prefix; never by `*`), so that the owner of an endpoint learns when it was disabled, paused
// or resumed, or a delivery died. Each is written, with its deliveries, in the transaction of what it
// reports: the outbox is their sink, so that endpoints and the worker can report without knowing events.

import type { Db } from '../db/database.ts';
import { newId } from '../lib/ids.ts';
import { filterDocument, filtered, patternsOf } from '../lib/patterns.ts';
import type { EventTypeDeclaration } from '../registry.ts';
import { DELIVERIES_CHANNEL } from './channel.ts';
import { enqueue } from './enqueue.ts';
import { type Lane, settle } from './lanes.ts';

/** The event type of the test operation, sent to one endpoint only. */
export const TEST_EVENT_TYPE = 'core.webhook.test';

export type OperationalEvent =
  | {
      projectId: string;
      type:
        | 'core.endpoint.disabled'
        | 'core.endpoint.paused'
        | 'core.endpoint.resumed'
        | 'core.delivery.dead';
      data: { endpointId: string; deliveryId?: string; eventId?: string; reason: string };
    }
  | {
      projectId: string;
      type: 'core.erasure.failed';
      data: { erasureId: string; capability: string; attempts: number; lastError: string | null };
    };

export type OperationalType = OperationalEvent['type'];

const uuid = { type: 'string', format: 'uuid' };
const dataSchema = (required: string[]) => ({
  type: 'object',
  properties: { endpointId: uuid, deliveryId: uuid, eventId: uuid, reason: { type: 'string' } },
  required: ['endpointId', 'reason', ...required],
});
const ENDPOINT = '0193b0a4-1e0a-7c1e-9d6e-2f4b8a1c3d5e';
const DELIVERY = '0193b0a4-1e0b-7a2b-8c3d-4e5f6a7b8c9d';
const EVENT = '0193b0a4-1e0b-7d4e-9f10-a1b2c3d4e5f6';

/** What Core declares in the catalogue: the operational events and the test event. */
export const CORE_EVENT_TYPES: EventTypeDeclaration[] = [
  {
    name: 'core.endpoint.disabled',
    description:
      'An endpoint was disabled: it answered 410 Gone, or its deliveries died too many times in a row. Nothing is sent to it until it is enabled again.',
    schema: dataSchema([]),
    example: { endpointId: ENDPOINT, reason: 'the endpoint answered 410 Gone' },
  },
  {
    name: 'core.endpoint.paused',
    description: 'An endpoint was paused: its deliveries are created and held, nothing is sent.',
    schema: dataSchema([]),
    example: { endpointId: ENDPOINT, reason: 'paused' },
  },
  {
    name: 'core.endpoint.resumed',
    description: 'A paused endpoint was resumed: what it held goes out, oldest first.',
    schema: dataSchema([]),
    example: { endpointId: ENDPOINT, reason: 'resumed' },
  },
  {
    name: 'core.delivery.dead',
    description:
      'A delivery died: every attempt failed, or the endpoint answered 410. Recover it with a retry or a bulk recovery.',
    schema: dataSchema(['deliveryId', 'eventId']),
    example: { endpointId: ENDPOINT, deliveryId: DELIVERY, eventId: EVENT, reason: 'HTTP 500' },
  },
  {
    name: 'core.erasure.failed',
    description:
      'A capability did not answer an erasure within its window (7 days): the person may still be in its data. The erasure’s record tells the rest.',
    schema: {
      type: 'object',
      properties: {
        erasureId: uuid,
        capability: { type: 'string' },
        attempts: { type: 'integer' },
        lastError: { type: ['string', 'null'] },
      },
      required: ['erasureId', 'capability', 'attempts'],
    },
    example: { erasureId: EVENT, capability: 'notify', attempts: 170, lastError: 'HTTP 503' },
  },
  {
    name: TEST_EVENT_TYPE,
    description: 'A test event, sent to one endpoint when asked, whatever it subscribes to.',
    schema: { type: 'object', properties: { message: { type: 'string' }, endpointId: uuid } },
    example: { message: 'A test event from platform-core', endpointId: ENDPOINT },
  },
];

/** Writes operational events and their deliveries in the caller's transaction (their lanes settled). */
export async function emitOperational(db: Db, events: OperationalEvent[], now = new Date()) {
  if (events.length === 0) return;
  const ids = events.map(() => newId(now));
  const { rows } = await db.query<{ lanes: [string, string, string][] }>(
    `with new as (
       select * from unnest($1::uuid[], $2::uuid[], $3::text[], $4::json[]) as n(project_id, id, type, data)
     ), event as (
       insert into events (project_id, id, type, data, created_at)
       select project_id, id, type, data, uuid_time(id) from new
       returning project_id, id, type, data, created_at
     ), ${enqueue({
       project: 'event.project_id',
       event: 'event.id',
       createdAt: 'event.created_at',
       kind: 'dispatch',
       orderingKey: 'null::text',
       from: `event cross join ${patternsOf('event.type')} t
                    join webhook_endpoints w on w.project_id = event.project_id and w.active
                                            and w.event_types && t.patterns`,
       where: filtered(filterDocument('event.type', 'event.data')),
     })}
     select coalesce(jsonb_agg(distinct jsonb_build_array(project_id, endpoint_id, lane))
                       filter (where lane is not null), '[]') as lanes,
            case when count(*) > 0 then pg_notify('${DELIVERIES_CHANNEL}', '') end
       from queued`,
    [
      events.map((e) => e.projectId),
      ids,
      events.map((e) => e.type),
      events.map((e) => JSON.stringify(e.data)),
    ],
  );
  const lanes = (rows[0]?.lanes ?? []).map(
    ([projectId, endpointId, lane]): Lane => ({ projectId, endpointId, lane }),
  );
  await settle(db, lanes);
}
