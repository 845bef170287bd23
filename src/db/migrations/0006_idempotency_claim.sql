-- The idempotency claim of the hot path (src/http/idempotency.ts) as one function call, so that it can
-- travel in the same query string as BEGIN and the operation's first statement: one round trip.
-- It takes the key's transaction-scoped advisory lock without waiting and reads the key's record, and it
-- answers a refusal by raising, which stops the statements sent after it:
--   PCBSY  another transaction holds the key: its request is still being processed;
--   PCREC  a live record exists; DETAIL is its status, fingerprint and sealed body (hex, space-separated).
-- An expired record is deleted, so that recording is a plain insert. The lock key is the one
-- idempotencyStore.claim takes.
create function idempotency_claim(claim_project uuid, claim_key text, cutoff timestamptz) returns void
language plpgsql as $$
declare
  found_record record;
begin
  if not pg_try_advisory_xact_lock(hashtextextended(claim_project::text || '/' || claim_key, 0)) then
    raise exception using errcode = 'PCBSY', message = 'idempotency key in progress';
  end if;
  select k.status, k.fingerprint, k.sealed_body, k.created_at into found_record
    from idempotency_keys k
   where k.project_id = claim_project and k.key = claim_key;
  if not found then
    return;
  end if;
  if found_record.created_at > cutoff then
    raise exception using errcode = 'PCREC', message = 'idempotency key recorded',
      detail = found_record.status || ' ' || encode(found_record.fingerprint, 'hex') || ' '
               || coalesce(encode(found_record.sealed_body, 'hex'), '');
  end if;
  delete from idempotency_keys k where k.project_id = claim_project and k.key = claim_key;
end
$$;
