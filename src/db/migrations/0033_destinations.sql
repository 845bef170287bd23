-- Destinations beyond HTTPS (contract 0.4): a webhook endpoint's row is a destination of a type. A webhook
-- keeps its url; a broker's row keeps its target (exchange and routing key, stream, subject) with the
-- broker's URL without its password in `target`, and the password sealed (AES-256-GCM, bound to the
-- destination). `url` holds the broker's URL without its password too (empty for polling), so that every
-- reader of an endpoint's address reads one column.
alter table webhook_endpoints
  add column destination_type text not null default 'webhook'
    check (destination_type in ('webhook', 'rabbitmq', 'redis', 'nats', 'polling')),
  add column target jsonb,
  add column target_secret_sealed bytea,
  add constraint webhook_endpoints_target_whole check ((destination_type = 'webhook') = (target is null));

-- A polling destination's feed: a delivery to it is delivered once appended here. It is read in (xid, seq)
-- order up to the oldest transaction still running (pg_snapshot_xmin), as the usage changes are
-- (migration 0028): an append still uncommitted can never land behind a cursor a consumer already holds.
-- The payload is the webhook payload as sent, byte for byte. Maintenance forgets what is past the
-- history's horizon; a destination deleted takes its feed with it.
create table destination_messages (
  project_id uuid not null,
  endpoint_id uuid not null,
  seq bigint generated always as identity,
  xid xid8 not null default pg_current_xact_id(),
  event_id uuid not null,
  event_type text not null,
  event_created_at timestamptz not null,
  payload text not null,
  primary key (project_id, endpoint_id, xid, seq),
  foreign key (project_id, endpoint_id) references webhook_endpoints (project_id, id) on delete cascade
);
create index destination_messages_age on destination_messages (event_created_at);
