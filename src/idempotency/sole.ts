// An idempotent write in one statement: the claim, the operation's effect, the statements sent with its
// commit (an audit entry) and the record of its answer, in one round trip and one implicit transaction:
//
//   with <effect's CTEs>, with_commit_0 as (<audit insert>), record as (insert into idempotency_keys …)
//   select case when <the key is held or recorded> then idempotency_claim(…) end,
//          case when (<check>) is not true then sole_write_missed() end [, pg_notify(…)]
//
// The select list is evaluated in order. The claim comes first, inline: it takes the key's advisory lock
// without waiting (the lock idempotency_claim takes) and probes the key's record, so the fast path calls
// no function. Only a key held or recorded calls idempotency_claim, which reads the refusal and raises it
// (in progress, recorded) as in the pipelined transaction, or deletes a record past its 24 hours and lets
// the statement go on; that record may still meet the insert, which is then a miss (pipeline.ts).
// Then the check, which pulls the effect's CTEs and raises when the effect is not what was predicted (a
// check that is null counts as not). Any raise undoes the whole statement, record included, so the effect
// and its record still commit together or not at all. The answer is sealed before the statement runs:
// that is why only operations whose answer is known beforehand (their ids and times made here) can go
// this way.
import type pg from 'pg';
import { pgCode, type SoleWrite } from '../db/database.ts';
import { type Claim, cutoffOf, type Recorded } from './store.ts';

/**
 * Texts of named sole statements, by name, each built once: a publish's is 2 KB, and the same string each
 * time is compared by identity, not read, when it is executed as the statement prepared under its name.
 * A name must stand for one text, as for every named statement; inline.ts refuses a second text under a
 * name, but one given here would go unseen (the first is used), so only writes whose text is fixed are
 * named (the stores' `…-sole` writes).
 */
const texts = new Map<string, string>();

/** The sole write as the one statement that also claims its key and records its answer. */
export function soleStatement(
  write: SoleWrite,
  withCommit: pg.QueryConfig[],
  claim: Claim,
  recorded: Recorded,
): pg.QueryConfig {
  const values = [...write.values];
  for (const statement of withCommit) values.push(...(statement.values ?? []));
  const { notify } = write;
  values.push(claim.projectId, claim.key, recorded.fingerprint, recorded.status, recorded.sealedBody);
  values.push(claim.now, cutoffOf(claim.now), ...(notify ? [notify.channel, notify.payload] : []));
  const names = [write.name, ...withCommit.map((statement) => statement.name)];
  // Named only when every part is: a part without a name may change from call to call.
  const name = names.every(Boolean) ? `sole:${names.join('+')}${notify ? ':notify' : ''}` : undefined;
  let text = name === undefined ? undefined : texts.get(name);
  if (text === undefined) {
    text = soleText(write, withCommit);
    if (name !== undefined) texts.set(name, text);
  }
  return { name, text, values };
}

/** The statement's text: the write's CTEs, the statements sent along, the record, then the claim and the check. */
function soleText(write: SoleWrite, withCommit: pg.QueryConfig[]): string {
  let count = write.values.length;
  const ctes = [write.ctes];
  for (const [i, statement] of withCommit.entries()) {
    ctes.push(`with_commit_${i} as (${shiftParameters(statement.text, count)})`);
    count += statement.values?.length ?? 0;
  }
  const $ = (n: number) => `$${count + n}`;
  return `with ${ctes.join(',\n')},
  record as (
    insert into idempotency_keys (project_id, key, fingerprint, status, sealed_body, created_at)
    values (${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}, ${$(5)}, ${$(6)})
  )
select case when not pg_try_advisory_xact_lock(hashtextextended(${$(1)}::uuid::text || '/' || ${$(2)}::text, 0))
                 or exists (select from idempotency_keys k where k.project_id = ${$(1)} and k.key = ${$(2)})
            then idempotency_claim(${$(1)}, ${$(2)}, ${$(7)}) end,
       case when (${write.check}) is not true then sole_write_missed() end
       ${write.notify ? `, pg_notify(${$(8)}, ${$(9)})` : ''}`;
}

/** Whether the sole write raised because its effect was not what was predicted: nothing changed. */
export const missed = (error: unknown) => pgCode(error) === 'PCMIS';

/** The statement with each `$n` made `$(n + by)`, to follow `by` parameters of another part. */
function shiftParameters(text: string, by: number): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + by}`);
}
