-- What a receiver can ask for (contract 0.4): a name and a description shown in the portal, the
-- project's own metadata, and headers sent with every delivery. The headers' values are sealed (AES-256-GCM,
-- bound to the endpoint, as its secrets are): `header_names` keeps their names in clear for the answers,
-- which show the values as ***; `headers_sealed` is null when there are none, so a claim carries nothing
-- more for an endpoint that asks for nothing.
alter table webhook_endpoints
  add column name text check (char_length(name) <= 100),
  add column description text check (char_length(description) <= 1000),
  add column metadata jsonb not null default '{}',
  add column header_names text[] not null default '{}',
  add column headers_sealed bytea;
