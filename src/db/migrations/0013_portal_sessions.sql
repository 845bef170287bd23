-- Portal sessions (CONTRACT.md, Contract 0.2, Portal). A project's key mints a session and a one-time
-- code (the link's fragment, good for 10 minutes); the portal's page exchanges the code for the session's
-- token, which it holds as a cookie. Only the SHA-256 of the code and of the token are stored, and the
-- code's is cleared by its exchange. A session acts for its project with the scopes it was given (the
-- portal's, capped by the creating key's), until it expires or is revoked, or its key is.
create table portal_sessions (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references projects (id) on delete cascade,
  key_id uuid not null references api_keys (id) on delete cascade,
  scopes text[] not null,
  language text not null,
  code_hash bytea unique,
  code_expires_at timestamptz not null,
  token_hash bytea unique,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz
);
create index portal_sessions_listing on portal_sessions (project_id, created_at desc, id desc);
