-- An idempotent write that is one statement (idempotency/sole.ts) goes in one round trip: the claim, the
-- operation's effect and its record in a single statement, its answer sealed beforehand. The effect is
-- written as it was foreseen; when it is not (the project is full, a subscription changed), the statement
-- calls this function, which raises and so undoes the whole statement, and the request goes the ordinary
-- way. It is called only then: the fast path calls no function of its own but the claim.
create function sole_write_missed() returns void
language plpgsql as $$
begin
  raise exception using errcode = 'PCMIS', message = 'the single write did not take place as foreseen';
end
$$;
