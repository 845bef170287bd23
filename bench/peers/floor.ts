// The service's floor in PostgreSQL: what recording its deliveries alone costs the server, with no claim,
// no send and no worker. The record is each delivery's next state and its attempt row, written as the
// worker writes them (recordAttempts, in batches of the recorder's size), and it is what the API's
// history reads (a delivery's state, its attempts); none of the peers keeps one. Beside each peer's whole
// PostgreSQL CPU per delivery, it bounds what any claim or worker could make of the service's rate.
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../../src/db/database.ts';
import { type Completion, recordAttempts } from '../../src/delivery/store.ts';
import { DATA, HELD_EVENTS, HISTORY_OF_QUEUED } from '../delivery.ts';

/** The recorder's batch (recorder.ts, FLUSH_AT). */
const BATCH = 200;
/** The service's default (PLATFORM_DISABLE_AFTER_DEAD): only dead deliveries count toward it. */
const DISABLE_AFTER_DEAD = 10;

/**
 * PostgreSQL's CPU (µs, read by `postgresCpu`) per delivery to record `events` events' deliveries to each
 * of `endpointIds`, queued as the benchmark queues them, held out of the worker's reach and leased.
 */
export async function recordFloor(
  databaseUrl: string,
  projectId: string,
  endpointIds: string[],
  events: number,
  postgresCpu: () => number,
): Promise<number> {
  const db = openDatabase(databaseUrl, { max: 2 });
  try {
    const token = randomUUID();
    const { rows } = await db.query<{ id: string; event_created_at: Date; endpoint_id: string }>(
      `${HELD_EVENTS}, q as (
         insert into delivery_queue (delivery_id, project_id, event_id, event_created_at, endpoint_id, next_attempt_at,
                                     lease_until, lease_token)
         select uuid_v7_at(e.created_at), $1, e.id, e.created_at, w.id, now() + interval '1 day',
                now() + interval '1 hour', $5
           from e cross join unnest($4::uuid[]) with ordinality as w(id, n)
          order by e.id, w.n
         returning *
       ), h as (${HISTORY_OF_QUEUED})
       select delivery_id as id, event_created_at, endpoint_id from q`,
      [projectId, JSON.stringify(DATA), events, endpointIds, token],
    );
    const completions: Completion[] = rows.map((row) => ({
      projectId,
      id: row.id,
      endpointId: row.endpoint_id,
      lane: null,
      gone: false,
      eventCreatedAt: row.event_created_at,
      leaseToken: token,
      attemptsBefore: 0,
      state: 'delivered',
      retryIn: 0,
      startedAt: new Date(),
      durationMs: 1,
      statusCode: 204,
      error: null,
      succeeded: true,
      responseBody: '',
    }));
    const before = postgresCpu();
    for (let i = 0; i < completions.length; i += BATCH)
      await recordAttempts(db, completions.slice(i, i + BATCH), DISABLE_AFTER_DEAD);
    const cpu = postgresCpu() - before;
    const { rows: done } = await db.query<{ n: number }>(
      `select count(*)::int as n from deliveries where state = 'delivered' and id = any($1::uuid[])
          and not exists (select from delivery_queue where delivery_id = any($1::uuid[]))`,
      [rows.map((r) => r.id)],
    );
    if (done[0]?.n !== rows.length) throw new Error(`record floor: ${done[0]?.n} of ${rows.length} recorded`);
    return cpu / rows.length;
  } finally {
    await db.close();
  }
}
