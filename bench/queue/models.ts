// Five data models of the delivery queue, each as the SQL of its three hot statements, for the
// queue-models benchmark (bench/queue-models.ts). Each lives in a schema of its own, on plain tables (one
// day of today's history is one plain table), and shares the events table of the schema `qm`.
//
//   today      one table: a delivery's state and its lease in one row; leasing and recording update it
//              in place, and recording is not HOT (the state is in the queue indexes' predicates)
//   apart      the queue in a table of its own (due time, lease, lane); finishing deletes the queue row
//              and updates the history row in place, a HOT update (no index names what changes)
//   appended   the queue apart, and the history never updated: a delivery's outcome is its last attempt
//              row, so finishing is a delete and an insert
//   moved      one table partitioned by state: the pending partition is the queue, and finishing moves
//              the row into the history partition (a delete and an insert, by one UPDATE)
//   advisory   appended, with leases as session advisory locks: the claim writes nothing (no row lock,
//              no lease columns), then reads its rows again in a fresh snapshot (one finished by another
//              worker since the first read is gone there); finishing deletes, inserts and unlocks
//
// The queue tables of apart, appended and advisory keep the service's fillfactor (40): a claim's leases
// stay on their pages, as they do in the service.
//
// $1 … of each: publish (project, event ids, event times, endpoint); lease (limit, token) returning the
// claimed keys with the event's data; record (project, ids, event times, token).
export interface Model {
  name: string;
  setup: string;
  publish: string;
  /** the due rows found and locked ($1 limit), when the lease finds them again by key */
  due?: string;
  /** the lease: $1 limit and $2 token, and with \`due\`, its rows as $3 projects, $4 ids, $5 times */
  lease: string;
  record: string;
}

const HISTORY = `project_id uuid not null, id uuid not null, event_id uuid not null,
  event_created_at timestamptz not null, endpoint_id uuid not null, kind text not null, created_at timestamptz not null`;
const OUTCOME = `state text not null default 'pending', attempts integer not null default 0, last_status integer,
  last_error text, delivered_at timestamptz, dead_at timestamptz`;
const SCHEDULE = `next_attempt_at timestamptz not null, lease_until timestamptz, lease_token uuid, lease_holder integer,
  seq bigint generated always as identity, lane text, held text, throttled boolean not null default false`;
const ATTEMPTS = (
  schema: string,
) => `create table ${schema}.attempts (project_id uuid not null, delivery_id uuid not null,
  event_created_at timestamptz not null, attempt integer not null, started_at timestamptz not null,
  duration_ms integer not null, status_code integer, error text, succeeded boolean not null, response_body text,
  primary key (project_id, delivery_id, event_created_at, attempt))`;
const PUBLISHED = `select $1::uuid as project_id, uuid_v7_at(t) as id, e as event_id, t as event_created_at,
  $4::uuid as endpoint_id from unnest($2::uuid[], $3::timestamptz[]) as p(e, t)`;
const KEY = (d: string, r: string) =>
  `${d}.project_id = ${r}.project_id and ${d}.id = ${r}.id and ${d}.event_created_at = ${r}.event_created_at`;
const RECORDED = `select * from unnest($2::uuid[], $3::timestamptz[]) as r(id, event_created_at)
  cross join (select $1::uuid as project_id) p`;
/** The claimed rows' event data, by the event's whole key, as the service's claim reads it. */
const WITH_EVENT = (
  claimed: string,
) => `select c.project_id, c.id, c.event_created_at, e.type, e.data::text as data
  from ${claimed} c cross join lateral (select e.type, e.data from qm.events e
   where e.project_id = c.project_id and e.id = c.event_id and e.created_at = c.event_created_at limit 1) e`;
/** The queue's claim that finds each row once: the lease is written by the rows' ctids. */
const LEASE_BY_CTID = (table: string, due: string) => `with claimed as (
  update ${table} q set lease_until = now() + interval '30 seconds', lease_token = $2
   where q.ctid = any (array(select ctid from ${table} where ${due}
                               and (lease_until is null or lease_until < now())
                             order by next_attempt_at limit (select $1::int) for update skip locked))
  returning q.project_id, q.id, q.event_id, q.event_created_at)
  ${WITH_EVENT('claimed')}`;

const today: Model = {
  name: 'today',
  setup: `create table today.deliveries (${HISTORY}, ${OUTCOME}, ${SCHEDULE},
            primary key (project_id, id, event_created_at)) with (fillfactor = 70);
    create index on today.deliveries (next_attempt_at) where state = 'pending' and held is null;
    create index on today.deliveries (project_id, endpoint_id, lane, seq) where state = 'pending';
    create index on today.deliveries (event_id);
    create index on today.deliveries (endpoint_id, created_at desc, id desc);
    create index on today.deliveries (dead_at) where state = 'dead';
    ${ATTEMPTS('today')}`,
  publish: `insert into today.deliveries (project_id, id, event_id, event_created_at, endpoint_id, kind, next_attempt_at, created_at)
    select project_id, id, event_id, event_created_at, endpoint_id, 'dispatch', now(), now() from (${PUBLISHED}) p`,
  // As the service claims today: the due rows found and locked, then found again by key to be leased.
  due: `select project_id, id, event_created_at from today.deliveries
      where state = 'pending' and held is null and next_attempt_at <= now()
        and (lease_until is null or lease_until < now())
      order by next_attempt_at limit (select $1::int) for update skip locked`,
  lease: `with claimed as (update today.deliveries d set lease_until = now() + interval '30 seconds', lease_token = $2
        from unnest($3::uuid[], $4::uuid[], $5::timestamptz[]) as r(project_id, id, event_created_at)
       where ${KEY('d', 'r')} and $1::int > 0
      returning d.project_id, d.id, d.event_id, d.event_created_at)
      ${WITH_EVENT('claimed')}`,
  record: `with updated as (
      update today.deliveries d set state = 'delivered', attempts = d.attempts + 1, lease_until = null, lease_token = null,
             last_status = 204, delivered_at = now()
        from (${RECORDED}) r where ${KEY('d', 'r')} and d.lease_token = $4
      returning d.project_id, d.id, d.event_created_at, d.attempts)
    insert into today.attempts select project_id, id, event_created_at, attempts, now(), 1, 204, null, true, '' from updated`,
};

/** The queue's, as the service keeps it since migration 0025 (docs/decisions/queue-fillfactor.md). */
const QUEUE_FILLFACTOR = 40;
const QUEUE = (
  schema: string,
) => `create table ${schema}.queue (project_id uuid not null, id uuid not null, event_id uuid not null,
    event_created_at timestamptz not null, endpoint_id uuid not null, attempts integer not null default 0, ${SCHEDULE},
    primary key (project_id, id, event_created_at)) with (fillfactor = ${QUEUE_FILLFACTOR});
  create index on ${schema}.queue (next_attempt_at) where held is null;
  create index on ${schema}.queue (project_id, endpoint_id, lane, seq);`;
const PUBLISH_APART = (schema: string, history: string) => `with p as (${PUBLISHED}), h as (
    insert into ${schema}.deliveries (project_id, id, event_id, event_created_at, endpoint_id, kind, created_at${history ? ', state' : ''})
    select project_id, id, event_id, event_created_at, endpoint_id, 'dispatch', now()${history ? `, 'pending'` : ''} from p)
  insert into ${schema}.queue (project_id, id, event_id, event_created_at, endpoint_id, next_attempt_at)
  select project_id, id, event_id, event_created_at, endpoint_id, now() from p`;
const DELETED = (schema: string) => `delete from ${schema}.queue q using (${RECORDED}) r
  where ${KEY('q', 'r')} and q.lease_token = $4 returning q.project_id, q.id, q.event_created_at, q.attempts + 1 as attempt`;

const apart: Model = {
  name: 'apart',
  setup: `create table apart.deliveries (${HISTORY}, ${OUTCOME}, primary key (project_id, id, event_created_at))
            with (fillfactor = 70);
    create index on apart.deliveries (event_id);
    create index on apart.deliveries (endpoint_id, created_at desc, id desc);
    create index on apart.deliveries (dead_at) where dead_at is not null;
    ${QUEUE('apart')} ${ATTEMPTS('apart')}`,
  publish: PUBLISH_APART('apart', 'state'),
  lease: LEASE_BY_CTID('apart.queue', 'held is null and next_attempt_at <= now()'),
  record: `with done as (${DELETED('apart')}), updated as (
      update apart.deliveries d set state = 'delivered', attempts = done.attempt, last_status = 204, delivered_at = now()
        from done where ${KEY('d', 'done')})
    insert into apart.attempts select project_id, id, event_created_at, attempt, now(), 1, 204, null, true, '' from done`,
};

/** The tables of a queue apart with a history never updated: appended's, and advisory's. */
const APPENDED_TABLES = (schema: string) => `create table ${schema}.deliveries (${HISTORY},
      primary key (project_id, id, event_created_at));
    create index on ${schema}.deliveries (event_id);
    create index on ${schema}.deliveries (endpoint_id, created_at desc, id desc);
    ${QUEUE(schema)} ${ATTEMPTS(schema)}`;

const appended: Model = {
  name: 'appended',
  setup: APPENDED_TABLES('appended'),
  publish: PUBLISH_APART('appended', ''),
  lease: LEASE_BY_CTID('appended.queue', 'held is null and next_attempt_at <= now()'),
  record: `with done as (${DELETED('appended')})
    insert into appended.attempts select project_id, id, event_created_at, attempt, now(), 1, 204, null, true, '' from done`,
};

const moved: Model = {
  name: 'moved',
  setup: `create table moved.deliveries (${HISTORY}, ${OUTCOME}, ${SCHEDULE}) partition by list (state);
    create table moved.pending partition of moved.deliveries for values in ('pending') with (fillfactor = 70);
    create table moved.done partition of moved.deliveries for values in ('delivered', 'dead', 'cancelled');
    alter table moved.pending add primary key (project_id, id, event_created_at);
    alter table moved.done add primary key (project_id, id, event_created_at);
    create index on moved.deliveries (event_id);
    create index on moved.deliveries (endpoint_id, created_at desc, id desc);
    create index on moved.pending (next_attempt_at) where held is null;
    create index on moved.pending (project_id, endpoint_id, lane, seq);
    create index on moved.done (dead_at) where state = 'dead';
    ${ATTEMPTS('moved')}`,
  publish: `insert into moved.deliveries (project_id, id, event_id, event_created_at, endpoint_id, kind, next_attempt_at, created_at)
    select project_id, id, event_id, event_created_at, endpoint_id, 'dispatch', now(), now() from (${PUBLISHED}) p`,
  lease: LEASE_BY_CTID('moved.pending', 'held is null and next_attempt_at <= now()'),
  record: `with updated as (
      update moved.deliveries d set state = 'delivered', attempts = d.attempts + 1, lease_until = null, lease_token = null,
             last_status = 204, delivered_at = now()
        from (${RECORDED}) r where ${KEY('d', 'r')} and d.state = 'pending' and d.lease_token = $4
      returning d.project_id, d.id, d.event_created_at, d.attempts)
    insert into moved.attempts select project_id, id, event_created_at, attempts, now(), 1, 204, null, true, '' from updated`,
};

/**
 * The lock of a queue row, in the session: held from the claim to the record, and let go of with the
 * session if the worker dies. Here the record unlocks in its own statement, before its commit; a service
 * would unlock after the commit (else another claim could take a row not yet deleted for all to see),
 * sending the unlocks with its next statement: the same work, which is what this benchmark counts.
 */
const ADVISORY = (id: string) => `hashtextextended(${id}::text, 0)`;

const advisory: Model = {
  name: 'advisory',
  setup: APPENDED_TABLES('advisory'),
  publish: PUBLISH_APART('advisory', ''),
  // The lock is the last condition, so a row that fails the others is never locked (a lock taken on a
  // row then left out would never be let go of).
  due: `select project_id, id, event_created_at from (
      select project_id, id, event_created_at, next_attempt_at from advisory.queue
       where held is null and next_attempt_at <= now()
       order by next_attempt_at) q
     where pg_try_advisory_lock(${ADVISORY('q.id')})
     limit (select $1::int)`,
  lease: `with claimed as (
      select q.project_id, q.id, q.event_id, q.event_created_at from advisory.queue q
        join unnest($3::uuid[], $4::uuid[], $5::timestamptz[]) as r(project_id, id, event_created_at) on ${KEY('q', 'r')}
       where $1::int > 0 and $2::uuid is not null)
      ${WITH_EVENT('claimed')}`,
  record: `with done as (delete from advisory.queue q using (${RECORDED}) r
        where ${KEY('q', 'r')} and $4::uuid is not null
        returning q.project_id, q.id, q.event_created_at, q.attempts + 1 as attempt),
      appended as (
        insert into advisory.attempts select project_id, id, event_created_at, attempt, now(), 1, 204, null, true, '' from done)
    select pg_advisory_unlock(${ADVISORY('id')}) from done`,
};

export const MODELS: Model[] = [today, apart, appended, moved, advisory];
