-- An endpoint's filter (contract 0.4): an Amazon EventBridge event pattern over {type, data}, kept as
-- given (`filter`, for the answers) and as the SQL/JSON path predicate the service compiled it into
-- (`filter_path`), which the statements that queue deliveries evaluate for the endpoints that have one.
alter table webhook_endpoints
  add column filter jsonb,
  add column filter_path jsonpath,
  add constraint webhook_endpoints_filter_compiled check ((filter is null) = (filter_path is null));
