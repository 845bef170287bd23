// The one way a service writes, and the whole write path read from here. A route's handler calls its
// service (`request.services.webhookEndpoints.create(…)`); from there:
//
//   1. The handler already runs inside runIdempotent (http/idempotency.ts wrapped every mutating route at
//      registration): the services it calls are bound to that request's transaction handle and hooks
//      (services.ts, audit/work.ts). No transaction is open yet and no connection is held.
//   2. The service checks and prepares what it can without the database (an address resolved, ids and
//      times made), then calls write() below with its predicted statement, if it has one.
//   3. Predicted: the idempotency claim, the effect, the audit entry and the recorded answer go as one
//      statement, one round trip, no BEGIN or COMMIT (sole.ts). Done, unless the effect was not as
//      predicted: then that statement undid itself.
//   4. Otherwise the ordinary way: the service's first statement opens the transaction, sent behind the
//      claim, BEGIN and a savepoint in one round trip (pipeline.ts, begin()); its other statements follow
//      on the same connection.
//   5. When the handler returns, its answer is recorded and COMMIT sent with the statements that go with
//      the commit (the audit entry), in one round trip (pipeline.ts, commit()); a 4xx the domain raised
//      is recorded after rolling back to the savepoint. The hooks run: onCommit (wake the workers, count
//      usage) or onRollback (give back what was taken).
//
// Either way the effect and its record commit together or not at all, and a retry with the same key
// replays the recorded answer (idempotency/store.ts).
import type { Db, SoleWrite, TransactionHooks } from '../db/database.ts';

/** A write's predicted outcome: the statement that makes it, and the answer it gives when it takes place. */
export interface Predicted<T> {
  statement: SoleWrite;
  answer: T;
}

export async function write<T>(
  hooks: Pick<TransactionHooks, 'sole'>,
  predicted: Predicted<T> | undefined,
  ordinary: () => Promise<T>,
): Promise<T> {
  if (predicted && (await hooks.sole(predicted.statement, predicted.answer))) return predicted.answer;
  return ordinary();
}

/**
 * Takes the request's idempotency claim before any other work: its transaction's first statement carries
 * the claim, so a write that first commits elsewhere or calls out (an erasure, a gateway call) holds its
 * key from the start, and a concurrent retry with that key waits for its answer.
 */
export const claimFirst = (db: Db) => db.query({ name: 'claim-first', text: 'select 1 as claimed' });
