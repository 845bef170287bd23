-- The management plane (CONTRACT.md, Contract 0.2, Management API).
--
-- Operator keys belong to no project (project_id null, `pk_op_` keys with operator scopes). Keys gain a
-- name, an expiry and the minute they were last used (written in batches, not per request).
alter table api_keys alter column project_id drop not null;
alter table api_keys
  add column name text check (length(name) between 1 and 200),
  add column expires_at timestamptz,
  add column last_used_at timestamptz;
create index api_keys_listing on api_keys (project_id, created_at desc, id desc);

-- Projects gain their retention (null: the installation's default), the origins that may frame their
-- portal, and when they last changed.
alter table projects
  add column retention_days integer check (retention_days between 1 and 400),
  add column portal_frame_ancestors text[] not null default '{}',
  add column updated_at timestamptz not null default now();
create index projects_listing on projects (created_at, id);

-- The audit log: every management write, key creation and revocation, endpoint change and subject
-- erasure, written in the transaction of its effect. It names what changed (fields), never a value
-- that is secret or personal. It has no foreign keys (it outlives what it names) and is append-only:
-- the trigger refuses every update and delete, so nothing in the service can change it.
create table audit_log (
  id uuid primary key default gen_random_uuid(),
  at timestamptz not null default now(),
  actor_type text not null check (actor_type in ('key', 'cli')),
  actor_key_id uuid,
  action text not null,
  project_id uuid,
  target_type text not null,
  target_id text not null,
  request_id text not null,
  fields text[] not null default '{}'
);
create index audit_log_newest on audit_log (at desc, id desc);
create index audit_log_by_project on audit_log (project_id, at desc, id desc);

create function audit_log_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'the audit log is append-only' using errcode = 'PCAUD';
end
$$;
create trigger audit_log_append_only before update or delete on audit_log
  for each row execute function audit_log_append_only();

-- Idempotency keys are scoped by project, and operator requests (which have none) by a scope of their
-- own, the nil UUID: the records are no longer tied to the projects table.
alter table idempotency_keys drop constraint idempotency_keys_project_id_fkey;

-- An erasure made by the CLI has no key.
alter table erasures alter column key_id drop not null;
