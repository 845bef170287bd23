// The one way a service writes. A write whose outcome it can foresee (the ids and times it makes, the room
// it expects) is offered as one statement: the idempotency claim, the effect, the audit entry and the
// recorded answer together, in one round trip (sole.ts). When that statement finds the effect not as
// foreseen it undoes itself, and the write goes the ordinary way, statement by statement, in the
// request's transaction; so does a write nothing was foreseen for. Either way the effect and its record
// commit together or not at all.
import type { Db, SoleWrite, TransactionHooks } from '../db/database.ts';

/** A write's foreseen outcome: the statement that makes it, and the answer it gives when it takes place. */
export interface Foreseen<T> {
  statement: SoleWrite;
  answer: T;
}

export async function write<T>(
  hooks: Pick<TransactionHooks, 'sole'>,
  foreseen: Foreseen<T> | undefined,
  ordinary: () => Promise<T>,
): Promise<T> {
  if (foreseen && (await hooks.sole(foreseen.statement, foreseen.answer))) return foreseen.answer;
  return ordinary();
}

/**
 * Takes the request's idempotency claim before any other work: its transaction's first statement carries
 * the claim, so a write that first commits elsewhere or calls out (an erasure, a gateway call) holds its
 * key from the start, and a concurrent retry with that key waits for its answer.
 */
export const claimFirst = (db: Db) => db.query({ name: 'claim-first', text: 'select 1 as claimed' });
