-- What an operator grants a capability beyond its own routes (contract 0.4, "A capability's life"):
-- `projects:read` (the installation's projects) and `usage:read` (every project's usage, and its changes),
-- which a billing service needs. Set by an operator only; a capability key can never change them.
alter table capabilities add column grants text[] not null default '{}'
  check (grants <@ array['projects:read', 'usage:read']::text[]);
