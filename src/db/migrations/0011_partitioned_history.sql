-- History with a horizon: events, their subject tags, deliveries and delivery attempts become range-
-- partitioned by the event's time, one partition per UTC day, so that retention drops whole days
-- (src/history/partitions.ts) instead of deleting rows, and a day's events, tags, deliveries and attempts
-- go together. A default partition takes any row whose day has no partition yet (a clock far ahead);
-- creating that day's partition later moves such rows into it.
--
-- Ids carry their time: event ids are UUID version 7 (their first 48 bits are the event's time in ms), and
-- so are delivery ids, made with their event's time, so a lookup by id alone finds its day's partition
-- (uuid_time). Ids made before this migration are version 4: their rows stay in the partition of their
-- real time, and a lookup of such an id looks in every partition.
--
-- The history tables have no foreign keys between them: their rows are written together by single
-- statements, and dropped together a day at a time; a key would cost a check per row and forbid the drop.

create function uuid_time(id uuid) returns timestamptz
language sql immutable parallel safe as $$
  select to_timestamp(('x' || substr(replace(id::text, '-', ''), 1, 12))::bit(48)::bigint / 1000.0)
$$;

-- A version 7 UUID carrying the time `at` (to the millisecond), the rest random.
create function uuid_v7_at(at timestamptz) returns uuid
language sql volatile parallel safe as $$
  select encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
              placing substring(int8send(floor(extract(epoch from at) * 1000)::bigint) from 3)
              from 1 for 6),
      52, 1), 53, 1),
    'hex')::uuid
$$;

alter table delivery_attempts rename to delivery_attempts_old;
alter table deliveries rename to deliveries_old;
alter table event_subjects rename to event_subjects_old;
alter table events rename to events_old;

create table events (
  project_id uuid not null,
  id uuid not null,
  type text not null,
  data jsonb not null,
  created_at timestamptz not null,
  redacted_at timestamptz
) partition by range (created_at);

create table event_subjects (
  project_id uuid not null,
  subject_hmac bytea not null,
  event_id uuid not null,
  event_created_at timestamptz not null
) partition by range (event_created_at);

-- state: pending (due at next_attempt_at; in flight while lease_until is in the future), delivered, dead
-- (every attempt failed, or the endpoint answered 410, or it was still pending at the horizon), cancelled.
create table deliveries (
  project_id uuid not null,
  id uuid not null,
  event_id uuid not null,
  event_created_at timestamptz not null,
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
  created_at timestamptz not null
) partition by range (event_created_at);

create table delivery_attempts (
  project_id uuid not null,
  delivery_id uuid not null,
  event_created_at timestamptz not null,
  attempt integer not null,
  started_at timestamptz not null,
  duration_ms integer not null,
  status_code integer,
  error text,
  succeeded boolean not null,
  response_body text
) partition by range (event_created_at);

-- One day's partitions of the four tables, made once (several workers may ask at once: the advisory lock
-- lets one make them). Rows the default partitions hold for that day are moved into them. Deliveries
-- keep 30 % of each page free, so that a claim's lease is a HOT update (migration 0007).
create function history_partition(day date) returns boolean
language plpgsql as $$
declare
  suffix text := to_char(day, 'YYYYMMDD');
  low timestamptz := day::timestamp at time zone 'UTC';
  high timestamptz := (day + 1)::timestamp at time zone 'UTC';
  history record;
begin
  perform pg_advisory_xact_lock(7310011);
  if to_regclass('events_' || suffix) is not null then
    return false;
  end if;
  for history in
    select * from (values ('events', 'created_at', 100), ('event_subjects', 'event_created_at', 100),
                          ('deliveries', 'event_created_at', 70), ('delivery_attempts', 'event_created_at', 100))
             as t(name, key, fillfactor)
  loop
    execute format('create table %I (like %I including defaults including constraints) with (fillfactor = %s)',
                   history.name || '_' || suffix, history.name, history.fillfactor);
    execute format('with moved as (delete from %I where %I >= %L and %I < %L returning *) insert into %I select * from moved',
                   history.name || '_default', history.key, low, history.key, high, history.name || '_' || suffix);
    execute format('alter table %I attach partition %I for values from (%L) to (%L)',
                   history.name, history.name || '_' || suffix, low, high);
  end loop;
  return true;
end
$$;

create table events_default partition of events default;
create table event_subjects_default partition of event_subjects default;
create table deliveries_default partition of deliveries default with (fillfactor = 70);
create table delivery_attempts_default partition of delivery_attempts default;

-- The days the existing history covers, and the week ahead.
select history_partition(day::date)
  from generate_series(
         coalesce((select min(created_at) from events_old), now())::date,
         (now() + interval '7 days')::date,
         interval '1 day') as day;

-- An event's time is kept to the millisecond (as an id carries it, and as the service reads it back).
insert into events (project_id, id, type, data, created_at, redacted_at)
select project_id, id, type, data, date_trunc('milliseconds', created_at), redacted_at from events_old;
insert into event_subjects (project_id, subject_hmac, event_id, event_created_at)
select s.project_id, s.subject_hmac, s.event_id, date_trunc('milliseconds', e.created_at)
  from event_subjects_old s join events_old e on e.project_id = s.project_id and e.id = s.event_id;
insert into deliveries
select d.project_id, d.id, d.event_id, date_trunc('milliseconds', e.created_at), d.endpoint_id, d.kind, d.state,
       d.attempts, d.next_attempt_at, d.lease_until, d.lease_token, d.last_status, d.last_error, d.delivered_at,
       d.dead_at, d.created_at
  from deliveries_old d join events_old e on e.project_id = d.project_id and e.id = d.event_id;
insert into delivery_attempts
select a.project_id, a.delivery_id, d.event_created_at, a.attempt, a.started_at, a.duration_ms, a.status_code, a.error,
       a.succeeded, a.response_body
  from delivery_attempts_old a join deliveries d on d.project_id = a.project_id and d.id = a.delivery_id;

drop table delivery_attempts_old, deliveries_old, event_subjects_old, events_old;

-- Keys and indexes on the parents, built after the rows are in; every partition has its own.
alter table events add primary key (project_id, id, created_at);
alter table event_subjects add primary key (project_id, subject_hmac, event_id, event_created_at);
alter table deliveries add primary key (project_id, id, event_created_at);
alter table delivery_attempts add primary key (project_id, delivery_id, event_created_at, attempt);
-- The claim reads this index: pending deliveries in due order.
create index deliveries_due on deliveries (next_attempt_at) where state = 'pending';
create index deliveries_by_event on deliveries (project_id, event_id);
create index deliveries_by_endpoint on deliveries (project_id, endpoint_id, created_at desc, id desc);
create index deliveries_dead on deliveries (dead_at) where state = 'dead';
create index delivery_attempts_failed on delivery_attempts (started_at) where not succeeded;
