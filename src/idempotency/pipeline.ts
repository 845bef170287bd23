// The transaction of an idempotent write, pipelined: the claim travels with the operation's first
// statement, and the record with COMMIT, so a write takes two round trips (plus any further statements of
// its operation), and a replay or a 409 one.
//
//   claim; begin; savepoint operation; <first statement>      (the connection is taken here, not before)
//   <the operation's other statements>
//   <record>; commit                                           (or, for a refusal of the domain:
//                                                               rollback to savepoint operation; <record>; commit)
//
// The claim (idempotency_claim, migration 0006) takes the key's transaction-scoped advisory lock without
// waiting and reads its record; it refuses by raising, which stops the string before BEGIN. The effect and
// its record commit together or not at all; a fault, a crash or a lost connection rolls both back, which
// releases the key at once. A refusal of the domain (a 4xx) is recorded in the same transaction, its
// effects undone by the savepoint, so the key is never free in between. The connection is taken at the
// first statement: an operation may first do slow work that holds none (resolving a host name), and
// whatever it refuses there still meets the claim first.
//
// An operation whose whole write is one statement, its answer known beforehand, offers it with `sole`
// (sole.ts): claim, effect and record then go in one statement, one round trip, and no BEGIN or COMMIT.
import type pg from 'pg';
import {
  type Database,
  type Db,
  isUnavailable,
  type SoleWrite,
  type TransactionHooks,
} from '../db/database.ts';
import { executable } from '../db/inline.ts';
import type { Keyring } from '../lib/crypto.ts';
import { type Answer, type RecordCodec, recordCodec } from './records.ts';
import { missed, soleStatement } from './sole.ts';
import {
  type Claim,
  claimQuery,
  claimRefusal,
  type Recorded,
  recordedMeanwhile,
  recordQuery,
} from './store.ts';

/** An answer, with headers that go out with it (not recorded). */
export type Refusal = Answer & { headers?: Record<string, string> };

/** What became of a request. */
export type Outcome =
  | { kind: 'done'; answer: Refusal } // it ran (or the domain refused it), and its answer is recorded
  | { kind: 'replayed'; answer: Answer } // the same request ran before: its recorded answer
  | { kind: 'reused' } // the key was used by another request
  | { kind: 'busy' }; // a request with this key is still running

/** The hooks of an idempotent transaction: its sole write records the whole answer it is given. */
export type IdempotentHooks = Omit<TransactionHooks, 'sole'> & {
  sole(write: SoleWrite, answer: Answer): Promise<boolean>;
};

export interface Operation {
  run(tx: Db, hooks: IdempotentHooks): Promise<Answer>;
  /** The answer to record for an error the domain raised on purpose, or undefined for a fault. */
  refusal(error: unknown): Refusal | undefined;
}

const SAVEPOINT = 'operation';

/** Thrown into the operation when its first statement's claim is refused; one instance, no stack to take. */
const CLAIM_REFUSED = new Error('the idempotency claim was refused');

export async function runIdempotent(
  deps: { db: Database; keyring: Keyring },
  claim: Claim,
  operation: Operation,
): Promise<Outcome> {
  const transaction = new PipelinedTransaction(
    deps.db,
    claim,
    recordCodec(deps.keyring, claim.projectId, claim.key),
  );
  try {
    return await transaction.run(operation);
  } finally {
    await transaction.release();
  }
}

class PipelinedTransaction {
  /** The operation's handle: its first statement goes behind the claim, the others wait for that one. */
  readonly handle: Db;
  private client: pg.PoolClient | undefined;
  private first: Promise<unknown> | undefined;
  private refused: Outcome | undefined;
  /** a transaction may be open on the client */
  private open = false;
  private broken = false;
  private withCommit: pg.QueryConfig[] = [];
  private committed: (() => void)[] = [];
  private beforeAnswer: ((db: Db) => Promise<void>)[] = [];
  /**
   * The connection broke while the statement that commits was under way: it may have committed. What was
   * taken for it is then not given back (onRollback does not run): counting it once too often is safe,
   * handing it out twice is not.
   */
  private outcomeUnknown = false;
  private rolledBack: (() => void)[] = [];
  private done = false;
  /** the answer a sole write recorded: the operation is done and committed */
  private soleAnswer: Answer | undefined;
  private readonly db: Database;
  private readonly claim: Claim;
  private readonly codec: RecordCodec;

  constructor(db: Database, claim: Claim, codec: RecordCodec) {
    this.db = db;
    this.claim = claim;
    this.codec = codec;
    this.handle = {
      query: ((statement: string | pg.QueryConfig, values?: unknown[]) => {
        const config = typeof statement === 'string' ? { text: statement, values } : statement;
        if (this.first) return this.first.then(() => (this.client as pg.PoolClient).query(config));
        const first = this.begin(config);
        this.first = first;
        return first;
      }) as Db['query'],
    };
  }

  async run(operation: Operation): Promise<Outcome> {
    const outcome = await this.outcomeOfRun(operation);
    // What the answer goes behind once the change committed (a setting bound in every process).
    if (outcome.kind === 'done') for (const wait of this.beforeAnswer) await wait(this.db);
    return outcome;
  }

  private async outcomeOfRun(operation: Operation): Promise<Outcome> {
    let answer: Refusal;
    let refusal = false;
    try {
      answer = await operation.run(this.handle, {
        beforeCommit: (statement) => this.withCommit.push(statement),
        onCommit: (callback) => this.committed.push(callback),
        beforeAnswer: (wait) => this.beforeAnswer.push(wait),
        onRollback: (callback) => this.rolledBack.push(callback),
        sole: (write, answer) => this.sole(write, answer),
      });
    } catch (error) {
      if (this.refused) return this.refused;
      if (this.soleAnswer) return this.soleDone(); // committed already: what came after changes nothing
      const refused = operation.refusal(error);
      if (!refused) return this.fault(error);
      answer = refused;
      refusal = true;
      // Its effects are undone: nothing to announce, and what it took is given back.
      this.withCommit = [];
      this.committed = [];
      this.beforeAnswer = [];
      this.settle(false);
    }
    if (this.refused) return this.refused; // the operation swallowed the claim's refusal
    if (this.soleAnswer) return this.soleDone();
    return this.commit(answer, refusal);
  }

  /**
   * The operation's whole write with the claim, the statements sent with the commit and the record, in
   * one statement; only as the first statement. True when it took place and committed; false when
   * nothing changed (it was not what was predicted, or an expired record stood in the way), and the
   * operation goes on the ordinary way. A refused claim ends the operation as a first statement's does.
   */
  private async sole(write: SoleWrite, answer: Answer): Promise<boolean> {
    if (this.first || this.soleAnswer) return false;
    const recorded = this.codec.seal(this.claim.fingerprint, answer);
    const statement = soleStatement(write, this.withCommit, this.claim, recorded);
    let sent = false;
    try {
      if (write.together) {
        sent = true;
        await this.db.commitTogether(statement, write.together.locks);
      } else {
        this.client ??= await this.db.pool.connect();
        sent = true;
        await this.client.query(statement);
      }
    } catch (error) {
      if (missed(error)) return false;
      const refusal = claimRefusal(error);
      if (refusal) this.refused = this.outcomeOf(refusal);
      else if (recordedMeanwhile(error)) {
        const outcome = await this.check();
        if (!outcome) return false; // an expired record, now deleted
        this.refused = outcome;
      } else {
        if (sent && isUnavailable(error)) this.outcomeUnknown = true;
        throw error;
      }
      throw CLAIM_REFUSED;
    }
    this.withCommit = [];
    this.soleAnswer = answer;
    return true;
  }

  private soleDone(): Outcome {
    this.settle(true);
    return { kind: 'done', answer: this.soleAnswer as Answer };
  }

  async release(): Promise<void> {
    this.settle(false); // nothing committed, unless settled already
    if (!this.client) return;
    if (this.open)
      await this.client.query('rollback').catch(() => {
        this.broken = true;
      });
    this.client.release(this.broken);
  }

  /** Sends the claim, BEGIN (and the savepoint) with a statement; resolves with the statement's result. */
  private async begin(statement: pg.QueryConfig, then = '', savepoint = true): Promise<pg.QueryResult> {
    this.client ??= await this.db.pool.connect();
    const client = this.client;
    const { projectId, key, now } = this.claim;
    const head = `${await executable(client, claimQuery(projectId, key, now))}; begin; `;
    const text = `${head}${savepoint ? `savepoint ${SAVEPOINT}; ` : ''}${await executable(client, statement)}${then}`;
    this.open = true;
    try {
      const results = (await client.query(text)) as unknown as pg.QueryResult[];
      return results[savepoint ? 3 : 2] as pg.QueryResult;
    } catch (error) {
      const refusal = claimRefusal(error);
      if (!refusal) throw error;
      this.open = false; // the string stopped before BEGIN: its implicit transaction is gone
      this.refused = this.outcomeOf(refusal);
      throw CLAIM_REFUSED;
    }
  }

  /**
   * Records the answer and commits, with the statements sent along with the commit: in one round trip,
   * with the claim too when no statement ran yet.
   */
  private async commit(answer: Refusal, refusal: boolean): Promise<Outcome> {
    const { projectId, key, fingerprint, now } = this.claim;
    const record = recordQuery(projectId, key, this.codec.seal(fingerprint, answer), now);
    let sent = false;
    try {
      this.client ??= await this.db.pool.connect();
      const client = this.client;
      let sentWith = '';
      for (const statement of this.withCommit) sentWith += `; ${await executable(client, statement)}`;
      sent = true;
      if (!this.first) await this.begin(record, `${sentWith}; commit`, false);
      else {
        const undo = refusal ? `rollback to savepoint ${SAVEPOINT}; ` : '';
        await client.query(`${undo}${await executable(client, record)}${sentWith}; commit`);
      }
    } catch (error) {
      if (this.refused) return this.refused;
      if (sent && isUnavailable(error)) this.outcomeUnknown = true;
      if (!recordedMeanwhile(error)) throw error;
      // A record committed meanwhile (the lock narrows that race but cannot close it): answer with it.
      await this.client?.query('rollback');
      this.open = false;
      return (await this.check()) ?? { kind: 'busy' };
    }
    this.open = false;
    this.settle(true);
    return { kind: 'done', answer };
  }

  /** Runs the callbacks of the way the operation ended, once. */
  private settle(committed: boolean) {
    if (this.done) return;
    this.done = true;
    if (!committed && this.outcomeUnknown) return;
    for (const callback of committed ? this.committed : this.rolledBack) callback();
  }

  /**
   * A fault: before the first statement the claim still comes first (a replay of a recorded key wins
   * over, say, today's limit being reached); otherwise the error goes on and the transaction rolls back.
   */
  private async fault(error: unknown): Promise<Outcome> {
    if (!this.first) {
      const outcome = await this.check().catch(() => undefined); // unreachable: the error stands
      if (outcome) return outcome;
    }
    throw error;
  }

  /** The claim alone, in a transaction that ends at once: the refusal it meets, or undefined. */
  private async check(): Promise<Outcome | undefined> {
    this.client ??= await this.db.pool.connect();
    const { projectId, key, now } = this.claim;
    try {
      await this.client.query(await executable(this.client, claimQuery(projectId, key, now)));
      return undefined;
    } catch (error) {
      const refusal = claimRefusal(error);
      if (!refusal) throw error;
      return this.outcomeOf(refusal);
    }
  }

  private outcomeOf(refusal: 'busy' | Recorded): Outcome {
    if (refusal === 'busy') return { kind: 'busy' };
    if (!refusal.fingerprint.equals(this.claim.fingerprint)) return { kind: 'reused' };
    return { kind: 'replayed', answer: this.codec.open(refusal) };
  }
}
