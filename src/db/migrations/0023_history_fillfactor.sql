-- A delivery's history row is written at publish and updated once when its attempt is recorded. With the
-- queue apart (0020) no index names what that update changes, so it is HOT whenever the row's page has room
-- for the new version; the recorder updates rows in batches in about the order they were written, so a
-- page's rows are updated together, in one transaction, and only as many of them as the free space holds
-- are HOT. At a fillfactor of 70, 8,000 of 20,000 rows updated that way were HOT: the rest gave the three
-- indexes an entry each and moved to a new page. At 45 all 20,000 were, in 30 % less time and a third of
-- the WAL. The price is disk: vacuumed as a quiet day is, the table keeps 29 % more pages
-- (docs/decisions/history-fillfactor.md). Days made from now on keep 55 % of each page free; the days
-- already made take it for the pages they add (a storage parameter takes a lock that neither reads nor
-- writes wait for). The function is 0011's, restated with the new value: a partitioned table keeps no
-- fillfactor of its own for its days to inherit.
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
                          ('deliveries', 'event_created_at', 45), ('delivery_attempts', 'event_created_at', 100))
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
    execute format('alter table %s set (fillfactor = 45)', day);
  end loop;
end
$$;
