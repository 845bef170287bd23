-- The queue keeps 60 % of each page free, so that leasing a delivery stays a HOT update
-- (docs/decisions/queue-fillfactor.md). A claim leases up to 200 due deliveries in one transaction, in
-- due order, which is about the order they were queued: a page's rows are leased together, and the
-- versions they leave cannot be pruned until that transaction ends. A lease fills three columns that were
-- null, so its version is about a fifth larger than the row; at 0020's 70, only as many as the page's
-- free space held stayed on it, and the rest moved and gave each of the queue's three indexes an entry.
-- At 40 a new version of every row of a page fits beside it. Pages already written keep their rows as
-- they are until those leave the queue; this takes a lock that neither reads nor writes wait for.
alter table delivery_queue set (fillfactor = 40);
