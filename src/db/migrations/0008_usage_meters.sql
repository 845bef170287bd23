-- Exactly-once usage flushes, with one row per process instead of one per flush (usage_flushes grew by a
-- row a second per process, forever). A meter (one per process) sends its flushes strictly one after the
-- other, numbered from 1, and retries an unsent one with the same number; the statement that adds a flush's
-- counts also raises its meter's last number, and adds nothing when the number is not above it. So a
-- retry after an unknown outcome counts once. Maintenance forgets meters silent for 7 days.
create table usage_meters (
  meter_id uuid primary key,
  last_flush bigint not null check (last_flush > 0),
  flushed_at timestamptz not null
);

drop table usage_flushes;
