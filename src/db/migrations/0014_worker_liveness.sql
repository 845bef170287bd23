-- A killed worker's leases are let go of as soon as its death is seen, not when they expire (60 s by
-- default). Each worker holds a session advisory lock (7310014, lock_key) on its listening connection for
-- as long as it lives; PostgreSQL drops the lock with the connection when the process dies. A delivery
-- names the worker that leased it (lease_holder), so another worker, seeing a heartbeat whose lock is
-- gone, can hand that worker's deliveries back at once. Workers of earlier versions take no lock and
-- leave lock_key null: they are never taken for dead, and their leases expire as before.
alter table worker_heartbeats add column lock_key integer;
alter table deliveries add column lease_holder integer;
