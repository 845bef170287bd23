-- The queue apart from the history (docs/decisions/delivery-queue.md). A delivery's place in the queue
-- (when it is due, who leases it, its ordered lane and why it is held) moves out of its history row into
-- delivery_queue, a small table of the pending deliveries only: leasing writes columns no index names (a
-- HOT update), finishing deletes the row. The history row keeps what the API reads of a delivery (its
-- state, attempts, last answer, times), and no index of the history names a column the worker writes, so
-- recording an attempt there is a HOT update too (a non-HOT one gave every index a new entry: the record
-- cost 90 µs a delivery, bench/RESULTS.md).
--
-- A delivery is pending exactly while it has a queue row: they are written and removed together (the
-- enqueue, the recorder, a cancel, the retention's horizon, a retry by hand).

-- seq: publish order, for the ordered lanes. lane and held as before (migration 0012). attempts: the
-- attempts made, as the history counts them, for the next one's schedule.
create table delivery_queue (
  delivery_id uuid primary key,
  project_id uuid not null,
  event_id uuid not null,
  event_created_at timestamptz not null,
  endpoint_id uuid not null,
  attempts integer not null default 0,
  seq bigint not null default nextval('delivery_seq'),
  lane text,
  held text check (held in ('paused', 'ordered')),
  throttled boolean not null default false,
  next_attempt_at timestamptz not null default now(),
  lease_until timestamptz,
  lease_token uuid,
  lease_holder integer
) with (fillfactor = 70);

-- The claim reads this index: the queued deliveries (not held) in due order.
create index delivery_queue_due on delivery_queue (next_attempt_at) where held is null;
-- An endpoint's deliveries by lane in publish order: its lanes' heads, what waits, cancelling, counting.
create index delivery_queue_lanes on delivery_queue (endpoint_id, lane, seq);

-- The pending deliveries, leases and all: a worker of the previous version that is still sending one
-- records it against a history row that no longer takes leases, so it fails and is retried until its
-- lease ends; the delivery is then sent again (at least once, as after any crash), never lost. Stop the
-- old workers first for none to be sent twice (docs/operations.md, Upgrading).
insert into delivery_queue (delivery_id, project_id, event_id, event_created_at, endpoint_id, attempts, seq, lane,
                            held, throttled, next_attempt_at, lease_until, lease_token, lease_holder)
select id, project_id, event_id, event_created_at, endpoint_id, attempts, coalesce(seq, nextval('delivery_seq')), lane,
       held, throttled, next_attempt_at, lease_until, lease_token, lease_holder
  from deliveries
 where state = 'pending';

-- The dead deliveries' index named the state: every recorded attempt changed an indexed column.
drop index deliveries_dead;
create index deliveries_dead on deliveries (dead_at) where dead_at is not null;

drop index deliveries_due;
drop index deliveries_pending;
alter table deliveries
  drop column next_attempt_at,
  drop column lease_until,
  drop column lease_token,
  drop column lease_holder,
  drop column seq,
  drop column lane,
  drop column held,
  drop column throttled;
