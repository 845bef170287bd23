-- The usage change feed (contract 0.4, GET /capability/v1/usage/changes): every change of a day's total, in
-- an order a billing service resumes from forever, without a second copy of every record. Each total
-- carries the transaction that last changed it (its xid8, never reused or wrapped); the feed reads the
-- totals whose transaction ended before every transaction still running began (pg_snapshot_xmin), in
-- (xid, key) order. A transaction still open cannot commit a total behind the cursor then, so nothing is
-- skipped; a total changed again moves forward and is read again, with its count as it then stands. The
-- feed's storage is one column and one index on the totals: it grows with the totals, not the records.
alter table usage_daily add column changed_xid xid8 not null default pg_current_xact_id();
create index usage_daily_changes on usage_daily (changed_xid, project_id, day, capability, metric);
