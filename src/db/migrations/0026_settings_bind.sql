-- Settings bind at their 200 (contract 0.4; docs/decisions/settings-bind.md). A change of a setting that
-- processes keep in memory (a daily limit, a capability's upstream, erasure URL, signing secrets or its
-- removal) takes the next generation in its own transaction and announces it with NOTIFY. Each process
-- holds a lease on what it keeps: it renews it every half second here, and only while it has applied
-- every generation up to the current one. The change's answer waits until every process whose lease is
-- alive has applied its generation (seen) or has let its lease run out.
create table settings_generation (
  only_row boolean primary key default true check (only_row),
  generation bigint not null,
  -- when the last change was made: a process that starts, or catches up, treats what was reserved
  -- before then as reserved under other limits (usage/limits.ts)
  changed_at timestamptz not null default now()
);
insert into settings_generation (generation, changed_at) values (0, '-infinity');

create table settings_leases (
  process_id uuid primary key,
  -- the last generation this process applied
  seen bigint not null,
  -- when its lease was last renewed (the database's clock); it lives settings.LEASE_MS from then
  renewed_at timestamptz not null
);
