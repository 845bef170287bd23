// The service's floors in PostgreSQL: what recording its deliveries alone costs the server, with no claim,
// no send and no worker, measured on deliveries queued as the benchmark queues them, held out of the
// worker's reach and leased. Two records, each in batches of the recorder's size:
//
//   record     the service's own (recordAttempts) of a delivered attempt: its queue row deleted (by its
//              lease), its attempt row, its endpoint's run of deaths; its history row is not written
//   appended   the least any design keeping the API's attempts can write: the attempt row and the queue
//              row's delete, in one statement, with no history row updated and nothing else checked
//
// None of the peers keeps a history. Beside each peer's whole PostgreSQL CPU per delivery, the first bounds
// what any claim or worker could make of the service's rate, and the second what any data model could.
import { randomUUID } from 'node:crypto';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { type Completion, recordAttempts } from '../../src/delivery-store/record.ts';
import { BENCH_EVENTS, DATA, HISTORY_OF_QUEUED } from '../delivery.ts';

/** The recorder's batch (recorder.ts, FLUSH_AT). */
const BATCH = 200;
/** The service's default (PLATFORM_DISABLE_AFTER_DEAD): only dead deliveries count toward it. */
const DISABLE_AFTER_DEAD = 10;

interface Leased {
  id: string;
  event_created_at: Date;
  endpoint_id: string;
}

/** PostgreSQL's CPU (µs, read by `postgresCpu`) per delivery of each record, in one round. */
export interface Floors {
  record: number;
  appended: number;
}

/** Both floors for `events` events' deliveries to each of `endpointIds` of `projectId`. */
export async function recordFloors(
  databaseUrl: string,
  projectId: string,
  endpointIds: string[],
  events: number,
  postgresCpu: () => number,
): Promise<Floors> {
  const db = openDatabase(databaseUrl, { max: 2 });
  try {
    const measure = async (record: (rows: Leased[], token: string) => Promise<void>) => {
      const token = randomUUID();
      const rows = await queue(db, projectId, endpointIds, events, token);
      const before = postgresCpu();
      for (let i = 0; i < rows.length; i += BATCH) await record(rows.slice(i, i + BATCH), token);
      const cpu = postgresCpu() - before;
      await expectRecorded(db, rows);
      return cpu / rows.length;
    };
    const record = await measure((batch, token) =>
      recordAttempts(db, batch.map(completion(projectId, token)), DISABLE_AFTER_DEAD),
    );
    const appended = await measure(async (batch, token) => {
      await db.query(APPENDED, [batch.map((r) => r.id), token]);
    });
    return { record, appended };
  } finally {
    await db.close();
  }
}

/** The attempt rows of the leased queue rows $1 (token $2), and the queue rows gone, in one statement. */
const APPENDED = `with done as (
    delete from delivery_queue q using unnest($1::uuid[]) as r(id)
     where q.delivery_id = r.id and q.lease_token = $2
    returning q.project_id, q.delivery_id, q.event_created_at, q.attempts + 1 as attempt)
  insert into delivery_attempts (project_id, delivery_id, event_created_at, attempt, started_at, duration_ms,
                                 status_code, error, succeeded, response_body)
  select project_id, delivery_id, event_created_at, attempt, now(), 1, 204, null, true, '' from done`;

/** Queues the deliveries, due in a day and leased with `token`, and their history rows. */
async function queue(db: Database, projectId: string, endpointIds: string[], events: number, token: string) {
  const { rows } = await db.query<Leased>(
    `${BENCH_EVENTS}, q as (
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
  return rows;
}

const completion =
  (projectId: string, token: string) =>
  (row: Leased): Completion => ({
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
    sentHeaders: null,
  });

/** Every delivery has its attempt row and none is left in the queue. */
async function expectRecorded(db: Database, rows: Leased[]) {
  const ids = rows.map((r) => r.id);
  const { rows: done } = await db.query<{ n: number }>(
    `select count(*)::int as n from delivery_attempts where delivery_id = any($1::uuid[])
        and not exists (select from delivery_queue where delivery_id = any($1::uuid[]))`,
    [ids],
  );
  if (done[0]?.n !== rows.length) throw new Error(`record floor: ${done[0]?.n} of ${rows.length} recorded`);
}
