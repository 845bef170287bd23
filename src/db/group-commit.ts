// Statements committed together. PostgreSQL spends most of a one-statement transaction's CPU on the
// transaction, not the statement: publishes committed together cost it well under half as much CPU each
// (docs/decisions/group-commit.md). So a statement offered
// while others are being written waits for the next round trip, and goes with whatever else waits, in one
// transaction:
//
//   begin; execute "inline:…"(…); execute "inline:…"(…); …; commit
//
// A statement offered while fewer than WRITERS are under way goes at once and alone, as it would without
// this: nothing waits unless the database is already busy with others. When a batch fails, nothing of it
// committed (its string stops at the failing statement, before the commit), and each of its statements
// runs again alone, to meet its own outcome.
//
// A batch holds its rows' locks until its commit, so two batches that updated rows in different orders
// would deadlock, where the statements alone would not. So only statements that insert and read (a
// publish) may go together, or that also update one row, which they name (a create takes a slot on its
// project's row): a batch writes those in the order of their rows' names, every batch takes its locks in
// that one order, and no two batches wait on each other in a circle.
import type pg from 'pg';
import { executable } from './inline.ts';

/** Batches written at once, each on a connection of the pool. */
const WRITERS = 2;
/** The most statements in one batch. */
const MOST = 32;

interface Offer {
  statement: pg.QueryConfig;
  /** the name of the one row it updates, if any */
  locks: string | undefined;
  done: () => void;
  failed: (error: unknown) => void;
}

/**
 * A function that commits a statement, with others when others wait; resolves once it has committed.
 * `locks` names the one row the statement updates (none when it only inserts and reads).
 */
export function groupCommit(pool: pg.Pool): (statement: pg.QueryConfig, locks?: string) => Promise<void> {
  const waiting: Offer[] = [];
  let writing = 0;
  const next = () => {
    while (writing < WRITERS && waiting.length > 0) {
      writing++;
      void write(pool, waiting.splice(0, MOST)).finally(() => {
        writing--;
        next();
      });
    }
  };
  return (statement, locks) =>
    new Promise<void>((done, failed) => {
      waiting.push({ statement, locks, done, failed });
      next();
    });
}

async function write(pool: pg.Pool, batch: Offer[]): Promise<void> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    for (const offer of batch) offer.failed(error);
    return;
  }
  let broken = false; // a connection that cannot even roll back is not given back to the pool
  try {
    if (batch.length === 1) return await alone(client, batch[0] as Offer);
    // Concatenated, not joined: one copy of the statements' text, when pg encodes it (inline.ts).
    let text = 'begin';
    const offers: Offer[] = [];
    for (const offer of batch.sort(inLockOrder)) {
      // A value PostgreSQL could not take as a literal (text with NUL) fails its own statement only.
      try {
        text += `; ${await executable(client, offer.statement)}`;
        offers.push(offer);
      } catch (error) {
        offer.failed(error);
      }
    }
    try {
      await client.query(`${text}; commit`);
      for (const offer of offers) offer.done();
    } catch (error) {
      await client.query('rollback').catch(() => {
        broken = true;
      });
      if (broken) for (const offer of offers) offer.failed(error);
      else for (const offer of offers) await alone(client, offer);
    }
  } finally {
    client.release(broken);
  }
}

const inLockOrder = (a: Offer, b: Offer) =>
  (a.locks ?? '') < (b.locks ?? '') ? -1 : a.locks === b.locks ? 0 : 1;

/**
 * A statement in a transaction of its own. pg hands back an error as soon as PostgreSQL sends it, which
 * is before PostgreSQL has ended the failed transaction and let go of its locks; a caller that goes on
 * on another connection (a sole write that missed claims its key again, pipeline.ts) would find its own
 * key still held. So a failure is reported once the connection answers again: by then it has ended.
 */
const alone = (client: pg.PoolClient, offer: Offer) =>
  client.query(offer.statement).then(
    () => offer.done(),
    async (error: unknown) => {
      await client.query('').catch(() => {}); // a connection that cannot answer is gone, its locks with it
      offer.failed(error);
    },
  );
