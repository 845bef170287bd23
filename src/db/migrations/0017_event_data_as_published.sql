-- An event's data is kept as its publisher wrote it: `json` keeps the text (member order, numbers past
-- 2^53, escapes) where `jsonb` rewrote it. Changing the column's type would rewrite every partition under
-- a lock; instead the old column is renamed (a change of the catalogue only, which processes still
-- writing `data` survive: text goes into `json` as into `jsonb`) and kept for the events written before
-- this migration, which readers take when `data` is null. Retention drops those with their days.
alter table events rename column data to data_jsonb;
alter table events alter column data_jsonb drop not null;
alter table events add column data json;
