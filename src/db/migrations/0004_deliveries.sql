-- The deliveries table is the queue (a transactional outbox): an event and one delivery per subscribed
-- active endpoint are inserted in the transaction of the change that caused them. Workers claim due
-- deliveries with `for update skip locked` and a lease, send outside any transaction, then record.
--
-- state: pending (due at next_attempt_at; in flight while lease_until is in the future),
--        delivered, dead (every attempt failed, or the endpoint answered 410), cancelled (endpoint deleted).
-- kind:  dispatch (the event's first dispatch), replay, test.
-- endpoint_id has no foreign key on purpose: a delivery's history outlives its endpoint.
create table deliveries (
  project_id uuid not null,
  id uuid not null default gen_random_uuid(),
  event_id uuid not null,
  endpoint_id uuid not null,
  kind text not null check (kind in ('dispatch', 'replay', 'test')),
  state text not null default 'pending' check (state in ('pending', 'delivered', 'dead', 'cancelled')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null,
  lease_until timestamptz,
  lease_token uuid,
  last_status integer,
  last_error text,
  delivered_at timestamptz,
  dead_at timestamptz,
  created_at timestamptz not null,
  primary key (project_id, id),
  foreign key (project_id, event_id) references events (project_id, id) on delete cascade
);
-- The claim reads this index only: pending deliveries in due order.
create index deliveries_due on deliveries (next_attempt_at) where state = 'pending';
create index deliveries_by_event on deliveries (project_id, event_id);
create index deliveries_by_endpoint on deliveries (project_id, endpoint_id, created_at desc, id desc);
create index deliveries_dead on deliveries (dead_at) where state = 'dead';

-- Every attempt: when, how long, the status code or the error, and at most 4 KiB of the response.
create table delivery_attempts (
  project_id uuid not null,
  delivery_id uuid not null,
  attempt integer not null,
  started_at timestamptz not null,
  duration_ms integer not null,
  status_code integer,
  error text,
  succeeded boolean not null,
  response_body text,
  primary key (project_id, delivery_id, attempt),
  foreign key (project_id, delivery_id) references deliveries (project_id, id) on delete cascade
);
create index delivery_attempts_failed on delivery_attempts (started_at) where not succeeded;

-- Delivery workers report in here; health is degraded when deliveries are due and nobody has for 60 s.
create table worker_heartbeats (
  worker_id text primary key,
  host text not null,
  pid integer not null,
  started_at timestamptz not null,
  seen_at timestamptz not null
);
