-- Projects and their API keys. Keys are stored only as SHA-256 of the full key, with a short display
-- prefix; revoked keys stay so that a revoked key can be told from an unknown one.
create table projects (
  id uuid primary key default gen_random_uuid(),
  slug text not null unique check (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  name text not null check (length(name) between 1 and 200),
  mode text not null check (mode in ('test', 'live')),
  languages text[] not null default '{en}',
  theme jsonb not null default '{"logoUrl": null, "primary": "#1F6FEB", "accent": "#8250DF", "background": "#FFFFFF", "text": "#1F2328"}',
  created_at timestamptz not null default now()
);

create table api_keys (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references projects (id),
  key_hash bytea not null unique,
  display_prefix text not null,
  scopes text[] not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index api_keys_project on api_keys (project_id);
