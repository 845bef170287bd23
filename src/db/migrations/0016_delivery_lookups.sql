-- The worker finds each delivery it claims or completes by its whole key (project, id, day): only the
-- primary key answers that. The two indexes for listing began with the project too, and so matched the
-- same lookup on the project alone. To a plan made for any parameters (a prepared statement's generic
-- plan), "project = ?" looks as selective as one row (one over the number of projects), a tie with the
-- primary key that the planner broke towards these indexes: each lookup then read the project's every
-- delivery of the day, and a busy project's worker slowed as its day filled. Led by the event and the
-- endpoint (ids of one project each), they no longer match a lookup by key. Their queries still name
-- the project, and check it on each row.
drop index deliveries_by_event;
create index deliveries_by_event on deliveries (event_id);
drop index deliveries_by_endpoint;
create index deliveries_by_endpoint on deliveries (endpoint_id, created_at desc, id desc);
