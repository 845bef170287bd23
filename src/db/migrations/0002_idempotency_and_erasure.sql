-- Idempotency records: one row per (project, key), written in the same transaction as the operation it
-- records, so an effect and its record exist together or not at all. While the operation runs, its
-- transaction holds an advisory lock on the key (see src/http/idempotency.ts); nothing here is "running".
-- The recorded body is sealed (AES-256-GCM): some responses carry a secret shown once, such as a new
-- webhook signing secret, and nothing in the database may hold a secret in clear.
create table idempotency_keys (
  project_id uuid not null references projects (id) on delete cascade,
  key text not null,
  fingerprint bytea not null,
  status integer not null,
  sealed_body bytea,
  created_at timestamptz not null,
  primary key (project_id, key)
);
create index idempotency_keys_created on idempotency_keys (created_at);

-- Secrets of the installation itself, sealed with the master key (AES-256-GCM).
create table instance_secrets (
  name text primary key,
  sealed bytea not null,
  created_at timestamptz not null default now()
);

-- Events of a project. The delivery pipeline adds its own tables; erasure needs only these two.
create table events (
  project_id uuid not null references projects (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  type text not null,
  data jsonb not null,
  created_at timestamptz not null default now(),
  redacted_at timestamptz,
  primary key (project_id, id)
);

-- The people an event concerns, as keyed hashes (HMAC) of their normalized identifier, never in clear.
create table event_subjects (
  project_id uuid not null,
  subject_hmac bytea not null,
  event_id uuid not null,
  primary key (project_id, subject_hmac, event_id),
  foreign key (project_id, event_id) references events (project_id, id) on delete cascade
);

-- One row per erasure, for audit: who asked (key), when, what kind of subject, and the counts.
create table erasures (
  project_id uuid not null references projects (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  subject_type text not null,
  subject_hmac bytea not null,
  key_id uuid not null references api_keys (id),
  capabilities jsonb not null,
  created_at timestamptz not null,
  primary key (project_id, id)
);
