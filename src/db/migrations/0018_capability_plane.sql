-- The capability plane (docs/capabilities.md): products that plug in as services of their own.
--
-- A capability is registered by an operator, who alone decides where its traffic goes (upstream, erasure
-- URL); the capability then declares its manifest (scopes, metrics, event types, providers, erasure and
-- gateway settings) with its own key. Its signing secrets sign what Core sends it, as an endpoint's do.
create table capabilities (
  name text primary key check (name ~ '^[a-z][a-z0-9_]{1,31}$' and name <> 'core'),
  description text not null check (length(description) between 1 and 1000),
  upstream text,
  erasure_url text,
  manifest jsonb,
  active_secret bytea not null,
  previous_secret bytea,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- A capability's keys are API keys of a third kind: no project, a capability. Removing a capability
-- removes its keys.
alter table api_keys add column capability text references capabilities (name) on delete cascade;
alter table api_keys add constraint api_keys_one_owner check (project_id is null or capability is null);
create index api_keys_of_capability on api_keys (capability, created_at desc, id desc) where capability is not null;

-- Usage records a capability sends, kept by their id for deduplication. Generations of 35 days (by the
-- day a record arrives): a record is checked against its own generation (its primary key) and the one
-- before; the generation before that is dropped whole. So every id is remembered at least 35 days and at
-- most 70, and the storage is bounded. Partitions are made ahead by maintenance and on demand.
create table usage_records (
  generation integer not null,
  capability text not null,
  id text not null,
  project_id uuid not null,
  metric text not null,
  value bigint not null,
  day date not null,
  received_at timestamptz not null default now(),
  primary key (generation, capability, id)
) partition by list (generation);

-- Reservations against a day's limit (usage_quota, migration 0009, the mechanism Core's own limits use):
-- each holds part of the day's allowance until it is committed (the usage it records counts instead),
-- released, or it expires. Partitioned by the day they were made, which their ids (version 7) carry;
-- days are dropped two days on.
create table usage_reservations (
  day date not null,
  capability text not null,
  id uuid not null,
  project_id uuid not null,
  metric text not null,
  amount bigint not null check (amount > 0),
  expires_at timestamptz not null,
  state text not null default 'open' check (state in ('open', 'committed', 'released', 'expired')),
  committed bigint,
  committed_day date,
  created_at timestamptz not null default now(),
  primary key (day, capability, id)
) partition by range (day);
create index usage_reservations_open on usage_reservations (expires_at) where state = 'open';
