-- Webhook endpoints and their signing secrets. Secrets are sealed (AES-256-GCM under the master key,
-- bound to the endpoint id); previous_secret is present only while a rotation is under way.
create table webhook_endpoints (
  project_id uuid not null references projects (id) on delete cascade,
  id uuid not null,
  url text not null check (length(url) <= 2048),
  event_types text[] not null,
  active boolean not null default true,
  active_secret bytea not null,
  previous_secret bytea,
  created_at timestamptz not null default now(),
  primary key (project_id, id)
);
create index webhook_endpoints_listing on webhook_endpoints (project_id, created_at, id);

-- How many endpoints each project has, kept by the same statements that insert and delete them: the
-- 20-endpoint limit is one conditional update (`where webhook_endpoints < 20`), which PostgreSQL re-checks
-- against the latest row when concurrent creates queue on it, so the 21st always finds 20.
alter table projects add column webhook_endpoints integer not null default 0 check (webhook_endpoints >= 0);
