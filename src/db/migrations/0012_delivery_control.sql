-- Steering delivery (CONTRACT.md, Contract 0.2, Delivery control): an event-type catalogue, pause and
-- resume, a per-endpoint rate, ordered delivery, recovery jobs. Every column added to the history tables is
-- nullable or has a constant default, so adding it rewrites no partition.

-- The event types a project declares (the platform's own come from the capability registry, not here).
create table event_types (
  project_id uuid not null references projects (id) on delete cascade,
  name text not null,
  description text not null,
  schema jsonb,
  example jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (project_id, name)
);

-- Whether an endpoint's eventTypes (exact types, `*`, prefix patterns `a.b.*`) take an event type. `*`
-- takes every type but the platform's own `core.*`, which go only to endpoints that ask for them.
create function subscribes(patterns text[], type text) returns boolean
language sql immutable parallel safe as $$
  select patterns @> array[type]
      or (patterns @> array['*'] and not starts_with(type, 'core.'))
      or exists (select 1 from unnest(patterns) as p where right(p, 2) = '.*' and starts_with(type, left(p, -1)))
$$;

-- paused: deliveries are created and held, nothing is sent. rate_next_at: the next free send slot of a
-- rate-limited endpoint (delivery/pacing.ts). dead_streak: deliveries that died in a row; at the
-- installation's threshold the endpoint is disabled.
alter table webhook_endpoints
  add column paused boolean not null default false,
  add column rate_limit_per_second integer check (rate_limit_per_second between 1 and 10000),
  add column rate_next_at timestamptz,
  add column ordering text not null default 'none' check (ordering in ('none', 'endpoint', 'key')),
  add column dead_streak integer not null default 0;

alter table events add column ordering_key text check (length(ordering_key) between 1 and 255);

-- seq: the order deliveries were created in (publish order). lane: the ordered lane a delivery belongs
-- to ('' for an endpoint ordered as a whole, the event's ordering key for one ordered by key, null when
-- unordered). held: why a pending delivery is out of the queue: 'paused' (its endpoint is), 'ordered'
-- (another delivery of its lane goes first). throttled: its next_attempt_at is a send slot its endpoint's
-- rate reserved for it.
create sequence delivery_seq;
alter table deliveries
  add column seq bigint,
  add column lane text,
  add column held text check (held in ('paused', 'ordered')),
  add column throttled boolean not null default false;
alter table deliveries alter column seq set default nextval('delivery_seq');
-- The pending deliveries (the queue, a small part of the history) take their seq in creation order; the
-- others never need one.
update deliveries d set seq = o.seq
  from (select project_id, id, event_created_at, nextval('delivery_seq') as seq
          from (select project_id, id, event_created_at from deliveries where state = 'pending'
                 order by created_at, id) as pending) as o
 where d.project_id = o.project_id and d.id = o.id and d.event_created_at = o.event_created_at;

-- The claim reads this index: deliveries in the queue (pending, not held), in due order.
drop index deliveries_due;
create index deliveries_due on deliveries (next_attempt_at) where state = 'pending' and held is null;
-- An endpoint's pending deliveries, by lane in publish order: its lanes' heads, what waits, cancelling.
create index deliveries_pending on deliveries (project_id, endpoint_id, lane, seq) where state = 'pending';

-- Background jobs of a project (bulk recovery): claimed by one worker at a time under a lease, run in
-- batches, each committing its effect with its progress (done: how many of its events are re-sent), so
-- a crash resumes where it was.
create table jobs (
  project_id uuid not null references projects (id) on delete cascade,
  id uuid not null,
  kind text not null check (kind in ('recover')),
  state text not null default 'queued' check (state in ('queued', 'running', 'done', 'failed')),
  params jsonb not null,
  total integer not null,
  done integer not null default 0,
  error text,
  lease_until timestamptz,
  created_at timestamptz not null default now(),
  finished_at timestamptz,
  primary key (project_id, id)
);
create index jobs_runnable on jobs (created_at) where state in ('queued', 'running');
create index jobs_finished on jobs (finished_at) where state in ('done', 'failed');
-- The events a recovery job re-sends, fixed when it is asked for (so its total is exact and a resumed job
-- takes up where it was): n is their order, oldest event first. Forgotten when the job ends.
create table job_events (
  project_id uuid not null,
  job_id uuid not null,
  n integer not null,
  event_id uuid not null,
  event_created_at timestamptz not null,
  primary key (project_id, job_id, n),
  foreign key (project_id, job_id) references jobs (project_id, id) on delete cascade
);
