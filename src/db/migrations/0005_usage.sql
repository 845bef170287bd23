-- Usage by project, UTC day, capability and metric. Increments are buffered in each process and flushed
-- about once a second; each flush carries an id recorded in usage_flushes by the same statement, so a
-- flush retried after an unknown outcome (a lost connection) can never count twice.
create table usage_daily (
  project_id uuid not null references projects (id) on delete cascade,
  day date not null,
  capability text not null,
  metric text not null,
  count bigint not null,
  primary key (project_id, day, capability, metric)
);

create table usage_flushes (
  id uuid primary key,
  flushed_at timestamptz not null default now()
);

-- Per-project overrides of the daily limits configured for every project (PLATFORM_DAILY_LIMITS).
create table usage_limits (
  project_id uuid not null references projects (id) on delete cascade,
  capability text not null,
  metric text not null,
  daily_limit bigint not null check (daily_limit >= 0),
  primary key (project_id, capability, metric)
);
