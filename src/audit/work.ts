// A unit of work, what its services are bound to (services.ts builds them): its database handle (the pool
// for reads, a transaction for writes), that transaction's hooks, and who acts, which is how its changes
// are audited. A request, a CLI command and a test each make one; a service never asks for them again.

import type { Db, TransactionHooks } from '../db/database.ts';
import type { Audit } from './store.ts';

export interface Work {
  db: Db;
  hooks: TransactionHooks;
  audit: Audit;
}

const refuse = () => {
  throw new Error('a change made by read-only work: it has no transaction to make it in');
};

const refusedAudit: Audit = Object.assign(() => refuse(), { into: () => refusedAudit });

/** Reads on the pool: its hooks and its audit refuse (a write there is a bug). */
export const readOnly = (db: Db): Work => ({
  db,
  audit: refusedAudit,
  hooks: { beforeCommit: refuse, onCommit: refuse, beforeAnswer: refuse, onRollback: refuse, sole: refuse },
});
