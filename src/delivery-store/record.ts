import type { Database, Db } from '../db/database.ts';
import { cancelPending } from './enqueue.ts';
import { lockLanes, promote } from './lanes.ts';
import { emitOperational, type OperationalEvent } from './operational.ts';
import { daysOf } from './retention.ts';

export interface Completion {
  projectId: string;
  id: string;
  endpointId: string;
  /** its ordered lane, or null */
  lane: string | null;
  /** the endpoint answered 410 Gone: it is disabled */
  gone: boolean;
  /** the partition the delivery lives in */
  eventCreatedAt: Date;
  leaseToken: string;
  /** attempts made before this one, as the claim read them */
  attemptsBefore: number;
  state: 'pending' | 'delivered' | 'dead';
  /** seconds until the next attempt, when state is pending */
  retryIn: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  succeeded: boolean;
  responseBody: string | null;
  /** the names of the endpoint's own headers (and authorization) it sent, comma-separated, or null */
  sentHeaders: string | null;
}

/** What a recorded attempt did to its delivery (recordOutcomes). */
interface Recorded {
  project_id: string;
  id: string;
  event_id: string;
  endpoint_id: string;
  state: string;
  /** the event's type, for a delivery that died */
  type: string | null;
}

/** A batch recorded: the deliveries delivered by appendDelivered, and what recordOutcomes did to the rest. */
interface RecordedBatch {
  delivered: string[];
  outcomes: Recorded[];
}

/** The attempt rows of the recorded attempts, `from` a set with these columns (the attempt's number as `attempts`). */
const APPEND_ATTEMPTS = `insert into delivery_attempts (project_id, delivery_id, event_created_at, attempt, started_at,
                                  duration_ms, status_code, error, succeeded, response_body, sent_headers)
  select project_id, id, event_created_at, attempts, started_at, duration_ms, status_code, error, succeeded, response_body,
         sent_headers`;

/**
 * Delivered attempts ($1-$8, one array a column: appendDelivered) of deliveries leased by their tokens: the
 * queue row deleted, the attempt row appended.
 */
export const APPEND_DELIVERED = `with r as (
     select * from unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::text[],
                          $8::text[])
       as r(id, lease_token, started_at, duration_ms, status_code, error, response_body, sent_headers)
   ), finished as (
     delete from delivery_queue q using r
      where q.delivery_id = r.id and q.lease_token = r.lease_token
     returning q.project_id, q.delivery_id as id, q.event_id, q.event_created_at, q.endpoint_id,
               q.attempts + 1 as attempts, r.started_at, r.duration_ms, r.status_code, r.error, true as succeeded,
               r.response_body, r.sent_headers
   ), attempts as (${APPEND_ATTEMPTS} from finished)
   select id from finished`;

/**
 * Every outcome of a batch of attempts ($1-$13 and $16, one array a column: recordOutcomes), of deliveries
 * whose events fall in the days from $14 to $15. The bounds let PostgreSQL leave out every other day's partition
 * of the history and the events as the statement starts: the joins' own keys are known only row by row,
 * so without them each statement set up an update of every day's partition (docs/decisions/claim-fixed-cost.md).
 */
export const RECORD_OUTCOMES = `with r as (
     select * from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::float8[], $6::timestamptz[],
                          $7::int[], $8::int[], $9::text[], $10::bool[], $11::text[], $12::timestamptz[],
                          $13::int[], $16::text[])
       as r(project_id, id, lease_token, state, retry_in, started_at, duration_ms, status_code, error,
            succeeded, response_body, event_created_at, attempts_before, sent_headers)
   ), retried as (
     update delivery_queue q
        set attempts = q.attempts + 1, next_attempt_at = now() + make_interval(secs => r.retry_in),
            lease_until = null, lease_token = null, lease_holder = null
       from r
      where q.delivery_id = r.id and q.lease_token = r.lease_token and r.state = 'pending'
     returning q.delivery_id
   ), finished as (
     delete from delivery_queue q using r
      where q.delivery_id = r.id and q.lease_token = r.lease_token and r.state <> 'pending'
     returning q.delivery_id as id, q.project_id, q.event_id, q.event_created_at, q.endpoint_id, r.state,
               q.attempts + 1 as attempts, r.started_at, r.duration_ms, r.status_code, r.error, r.succeeded,
               r.response_body, r.sent_headers
   ), mine as materialized (
     -- "in" over the union is one hash of it: joined, a plan that counted the union as a row or two
     -- read all of it for each attempt (200 × 200 rows a batch). Materialized, so it is made once.
     select r.*, r.id in (select delivery_id from retried union all select id from finished) as mine
       from r
   ), updated as (
     -- Every outcome but a delivery: its history row stays as it is (delivery-store/state.ts).
     update deliveries d
        set state = case when r.mine then r.state else d.state end,
            attempts = d.attempts + 1,
            last_status = r.status_code,
            last_error = case when r.mine then r.error else d.last_error end,
            dead_at = case when r.mine and r.state = 'dead' then now() else d.dead_at end
       from mine r
      where d.project_id = r.project_id and d.id = r.id and d.event_created_at = r.event_created_at
        and d.event_created_at >= $14 and d.event_created_at < $15
        and ((r.mine and r.state <> 'delivered') or (not r.mine and d.state <> 'pending' and d.attempts = r.attempts_before))
     returning d.project_id, d.id, d.event_id, d.event_created_at, d.endpoint_id, d.state, d.attempts,
               r.started_at, r.duration_ms, r.status_code, r.error, r.succeeded, r.response_body, r.sent_headers
   ), recorded as (
     select * from updated
     union all
     select project_id, id, event_id, event_created_at, endpoint_id, state, attempts, started_at, duration_ms,
            status_code, error, succeeded, response_body, sent_headers
       from finished where state = 'delivered'
   ), attempts as (${APPEND_ATTEMPTS} from recorded)
   select u.project_id, u.id, u.event_id, u.endpoint_id, u.state, e.type
     from recorded u
     -- The type of a dead one's event, found by its whole key (lateral: see lease.ts)
     left join lateral (
       select e.type from events e
        where u.state = 'dead'
          and e.project_id = u.project_id and e.id = u.event_id and e.created_at = u.event_created_at
          and e.created_at >= $14 and e.created_at < $15
        limit 1) e on true`;

/** The batch's values of each of `keys`, one array a key: the unnest parameters of a recorder's statement. */
const columns = (batch: Completion[], keys: (keyof Completion)[]) =>
  keys.map((key) => batch.map((c) => c[key]));

/** The first key of a worker's liveness lock; the second is its heartbeat's lock_key. */
export const WORKER_LOCK = 7310014;

export const deliveryStore = (db: Db) => ({
  /**
   * Records a batch of attempts, only of deliveries this worker still leases. The delivered ones (nearly
   * all, usually) go first by the shortest statement (appendDelivered). What it did not record (every
   * other outcome, and a delivered one whose queue row is gone or no longer this worker's) goes through
   * the statement that knows every outcome (recordOutcomes).
   */
  async complete(batch: Completion[]): Promise<RecordedBatch> {
    const delivered = await this.appendDelivered(batch.filter((c) => c.state === 'delivered'));
    const done = new Set(delivered);
    const rest = batch.filter((c) => !done.has(c.id));
    return { delivered, outcomes: await this.recordOutcomes(rest) };
  },

  /**
   * Delivered attempts of deliveries this worker still leases, in one statement: the queue row is deleted
   * (checked against the lease) and the attempt row appended, and the history row is not written
   * (delivery-store/state.ts). recordOutcomes writes the same for them, with every other outcome's branches
   * besides: this costs PostgreSQL about half as much per delivery (docs/decisions/appended-delivered.md).
   * Those whose queue row it did not find are left to recordOutcomes. The ids of those it recorded: the
   * rest of what the recorder needs of them is in the batch already (five columns more a row were 0.3-0.4
   * KB more for the worker to read per delivery).
   */
  async appendDelivered(batch: Completion[]): Promise<string[]> {
    if (batch.length === 0) return [];
    const { rows } = await db.query<{ id: string }>({
      name: 'delivery-append-delivered',
      text: APPEND_DELIVERED,
      values: columns(batch, [
        'id',
        'leaseToken',
        'startedAt',
        'durationMs',
        'statusCode',
        'error',
        'responseBody',
        'sentHeaders',
      ]),
    });
    return rows.map((row) => row.id);
  },

  /**
   * Records a batch of attempts in one statement, only of deliveries this worker still leases: a retried
   * one stays in the queue for its next attempt, a finished one leaves it (a delete), and each takes one
   * attempt row. A delivered one's history row is not written: the queue row's delete and the attempt row
   * say it (delivery-store/state.ts). A retried or dead one's row takes the outcome (a HOT update: no index of
   * the history names what changes). A delivery cancelled (or expired) while its attempt was in flight has
   * left the queue: the attempt is recorded, and its state and reason kept, if no other attempt was
   * recorded since the claim.
   */
  async recordOutcomes(batch: Completion[]): Promise<Recorded[]> {
    if (batch.length === 0) return [];
    const { rows } = await db.query<Recorded>({
      name: 'delivery-complete',
      text: RECORD_OUTCOMES,
      values: [
        ...columns(batch, [
          'projectId',
          'id',
          'leaseToken',
          'state',
          'retryIn',
          'startedAt',
          'durationMs',
          'statusCode',
          'error',
          'succeeded',
          'responseBody',
          'eventCreatedAt',
          'attemptsBefore',
        ]),
        ...daysOf(batch.map((c) => c.eventCreatedAt)),
        batch.map((c) => c.sentHeaders),
      ],
    });
    return rows;
  },

  /** Hands claimed deliveries back (unsent: a stopping worker, a run cut short, a pause). */
  async release(deliveries: { id: string }[]) {
    if (deliveries.length === 0) return;
    await db.query(
      `update delivery_queue set lease_until = null, lease_token = null, lease_holder = null
        where delivery_id = any ($1::uuid[])`,
      [deliveries.map((d) => d.id)],
    );
  },

  async heartbeat(worker: { id: string; host: string; pid: number; startedAt: Date; lockKey: number }) {
    await db.query(
      `insert into worker_heartbeats (worker_id, host, pid, started_at, seen_at, lock_key)
       values ($1, $2, $3, $4, now(), $5)
       on conflict (worker_id) do update set seen_at = now()`,
      [worker.id, worker.host, worker.pid, worker.startedAt, worker.lockKey],
    );
  },

  /**
   * Hands back at once the leases of workers that died: a heartbeat whose worker's liveness lock
   * (migration 0014) is held by no session. Their heartbeats go; the number of deliveries freed is
   * returned. A worker whose listening connection is being re-made is taken for dead for that moment:
   * its deliveries may then be sent twice (at least once, as after any lease's expiry), never lost. The
   * asking worker (`self`) is never taken for dead, even while its own connection is being re-made.
   */
  async releaseDead(self: string): Promise<{ workers: number; deliveries: number }> {
    const { rows } = await db.query<{ workers: number; deliveries: number }>(
      `with dead as (
         delete from worker_heartbeats h
          where h.lock_key is not null and h.worker_id <> $1
            and not exists (
              select from pg_locks l
               where l.locktype = 'advisory' and l.granted and l.objsubid = 2
                 and l.database = (select oid from pg_database where datname = current_database())
                 and l.classid = ${WORKER_LOCK} and l.objid = h.lock_key)
         returning h.lock_key
       ), freed as (
         update delivery_queue q set lease_until = null, lease_token = null, lease_holder = null
           from dead
          where q.lease_holder = dead.lock_key and q.lease_until > now()
         returning 1
       )
       select (select count(*) from dead)::int as workers, (select count(*) from freed)::int as deliveries`,
      [self],
    );
    return rows[0] ?? { workers: 0, deliveries: 0 };
  },

  async forgetWorker(workerId: string) {
    await db.query(`delete from worker_heartbeats where worker_id = $1`, [workerId]);
  },
});

/**
 * The recorder's transaction finds every row it writes by its key, and never reads a table whole. A plan
 * kept from a small queue found the batch's rows by reading the queue whole, and kept doing so as a
 * backlog came, until autovacuum analyzed it: recording a batch then cost the backend
 * many times more (CLAIM_SETTINGS says the same of the claim; docs/decisions/plans-on-a-small-queue.md).
 */
export const RECORD_SETTINGS = 'set local enable_seqscan = off';

/**
 * Records a batch of attempts in one transaction, with what follows from them: the lanes whose heads
 * finished move on; an endpoint that answered 410, or whose deliveries died `disableAfterDead` times in a
 * row, is disabled (its pending deliveries cancelled); each death and each disabling is reported by an
 * operational event (a dead delivery of an operational event reports nothing). The lanes are locked
 * first (delivery-store/lanes.ts).
 */
export async function recordAttempts(db: Database, batch: Completion[], disableAfterDead: number) {
  await db.transaction(async (tx) => {
    const laned = batch.filter((c) => c.lane !== null);
    await lockLanes(
      tx,
      laned.map((c) => c.endpointId),
    );
    const recorded = await deliveryStore(tx).complete(batch);
    await promote(
      tx,
      laned.map((c) => ({ projectId: c.projectId, endpointId: c.endpointId, lane: c.lane as string })),
    );
    const events: OperationalEvent[] = recorded.outcomes
      .filter((r) => r.state === 'dead' && r.type !== null && !r.type.startsWith('core.'))
      .map((r) => ({
        projectId: r.project_id,
        type: 'core.delivery.dead',
        data: {
          endpointId: r.endpoint_id,
          deliveryId: r.id,
          eventId: r.event_id,
          reason: batch.find((c) => c.id === r.id)?.error ?? 'every attempt failed',
        },
      }));
    const disabled = await countDeaths(tx, batch, recorded, disableAfterDead);
    for (const gone of batch.filter((c) => c.gone)) {
      disabled.set(gone.endpointId, { projectId: gone.projectId, why: 'gone' });
    }
    for (const [endpointId, { projectId, why }] of disabled) {
      const reason =
        why === 'gone' ? 'the endpoint answered 410 Gone' : `${disableAfterDead} deliveries in a row died`;
      if (!(await disable(tx, projectId, endpointId))) continue;
      await cancelPending(tx, projectId, endpointId, `endpoint disabled: ${reason}`);
      events.push({ projectId, type: 'core.endpoint.disabled', data: { endpointId, reason } });
    }
    await emitOperational(tx, events);
  }, RECORD_SETTINGS);
}

/** Of the endpoints $2 (of projects $1) whose runs end ($3) or grow by $4 deaths, those whose run changes. */
export const RUNS_CHANGING = `select from unnest($1::uuid[], $2::uuid[], $3::bool[], $4::int[]) as r(project_id, id, reset, dead)
  cross join lateral (
    select from webhook_endpoints w
     where w.project_id = r.project_id and w.id = r.id and (r.dead > 0 or w.dead_streak > 0)
     limit 1) w`;

/** Why an endpoint is disabled, by endpoint id. */
type Disabling = { projectId: string; why: 'dead' | 'gone' };

/**
 * Keeps each endpoint's run of dead deliveries (a delivered one ends it); the endpoints whose run
 * reached the threshold. Only endpoints whose run changes are written.
 */
async function countDeaths(tx: Db, batch: Completion[], recorded: RecordedBatch, threshold: number) {
  const states = new Map(recorded.outcomes.map((r) => [r.id, r.state]));
  for (const id of recorded.delivered) states.set(id, 'delivered');
  const runs = new Map<string, { projectId: string; reset: boolean; dead: number }>();
  for (const c of batch) {
    const state = states.get(c.id);
    if (state !== 'dead' && state !== 'delivered') continue;
    const run = runs.get(c.endpointId) ?? { projectId: c.projectId, reset: false, dead: 0 };
    if (state === 'delivered') Object.assign(run, { reset: true, dead: 0 });
    else run.dead++;
    runs.set(c.endpointId, run);
  }
  const list = [...runs.entries()];
  const values = [
    list.map(([, r]) => r.projectId),
    list.map(([id]) => id),
    list.map(([, r]) => r.reset),
    list.map(([, r]) => r.dead),
  ];
  // Which runs change: a death, or a delivery that ends a run. Usually none (every delivery succeeded, no
  // run under way), and then nothing is written. Each endpoint is probed by its key (a lateral subquery
  // with a limit, which the planner cannot turn into a join): joined plainly, a plan made for any batch
  // (the statement is named) hashed the batch and read every endpoint of the installation, a cost that grew
  // with their number (docs/decisions/measured-choices.md).
  if (list.length === 0) return new Map<string, Disabling>();
  const { rowCount } = await tx.query({ name: 'delivery-deaths-changing', text: RUNS_CHANGING, values });
  if (!rowCount) return new Map<string, Disabling>();
  // Unnamed, so planned for these few endpoints: a probe of each by its key.
  const { rows } = await tx.query<{ project_id: string; id: string; disable: boolean }>(
    `update webhook_endpoints w
        set dead_streak = case when r.reset then r.dead else w.dead_streak + r.dead end
       from unnest($1::uuid[], $2::uuid[], $3::bool[], $4::int[]) as r(project_id, id, reset, dead)
      where w.project_id = r.project_id and w.id = r.id
        and (r.dead > 0 or w.dead_streak > 0)
     returning w.project_id, w.id, w.active and w.dead_streak >= $5 as disable`,
    [...values, threshold],
  );
  const disabled = new Map<string, Disabling>();
  for (const r of rows) if (r.disable) disabled.set(r.id, { projectId: r.project_id, why: 'dead' });
  return disabled;
}

/** Disables an endpoint; false if it already was (or is gone). */
async function disable(tx: Db, projectId: string, endpointId: string) {
  const { rowCount } = await tx.query(
    `update webhook_endpoints set active = false where project_id = $1 and id = $2 and active`,
    [projectId, endpointId],
  );
  return rowCount === 1;
}
