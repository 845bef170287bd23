-- A delivered delivery's history row is no longer updated: the recorder deletes its queue row and appends
-- its attempt, and readers derive the state (docs/decisions/appended-delivered.md). Only the rare outcomes
-- update the row now (a retry, a death, a cancel), so the 55 % of each page that 0023 kept free for the
-- recorder's update would stay empty in the common case: 595 bytes a delivery on disk against 469 at 70.
-- Back to 0011's 70, which keeps room for some of a retrying endpoint's updates to stay on their page. The
-- function is 0023's, restated with the value (a partitioned table keeps no fillfactor for its days), and
-- the days already made take it for the pages they add, under a lock that neither reads nor writes wait for.
create or replace function history_partition(day date) returns boolean
language plpgsql as $$
declare
  suffix text := to_char(day, 'YYYYMMDD');
  low timestamptz := day::timestamp at time zone 'UTC';
  high timestamptz := (day + 1)::timestamp at time zone 'UTC';
  history record;
begin
  perform pg_advisory_xact_lock(7310011);
  if to_regclass('events_' || suffix) is not null then
    return false;
  end if;
  for history in
    select * from (values ('events', 'created_at', 100), ('event_subjects', 'event_created_at', 100),
                          ('deliveries', 'event_created_at', 70), ('delivery_attempts', 'event_created_at', 100))
             as t(name, key, fillfactor)
  loop
    execute format('create table %I (like %I including defaults including constraints) with (fillfactor = %s)',
                   history.name || '_' || suffix, history.name, history.fillfactor);
    execute format('with moved as (delete from %I where %I >= %L and %I < %L returning *) insert into %I select * from moved',
                   history.name || '_default', history.key, low, history.key, high, history.name || '_' || suffix);
    execute format('alter table %I attach partition %I for values from (%L) to (%L)',
                   history.name, history.name || '_' || suffix, low, high);
  end loop;
  return true;
end
$$;

do $$
declare
  day regclass;
begin
  for day in select inhrelid::regclass from pg_inherits where inhparent = 'deliveries'::regclass loop
    execute format('alter table %s set (fillfactor = 70)', day);
  end loop;
end
$$;
