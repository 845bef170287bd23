-- Daily limits that are never passed, in one process or many. Before admitting anything it counts
-- against a limit, a process reserves a block of the day's allowance here, by a conditional update that
-- never takes `reserved` past the limit, and admits from that block in memory (no write per request). A
-- block is handed back when its process stops or has not used it for a few seconds (src/usage/limits.ts).
-- The first reservation of a day starts from the day's count, so a limit set mid-day counts what was
-- used before it. `last_grant` is what the last reservation granted, for its RETURNING.
create table usage_quota (
  project_id uuid not null references projects (id) on delete cascade,
  day date not null,
  capability text not null,
  metric text not null,
  reserved bigint not null check (reserved >= 0),
  last_grant bigint not null,
  primary key (project_id, day, capability, metric)
);
create index usage_quota_day on usage_quota (day);
