import type pg from 'pg';
import type { Db } from '../db/database.ts';

export interface Recorded {
  fingerprint: Buffer;
  status: number;
  /** the response body, sealed; null when there was none */
  sealedBody: Buffer | null;
}

export const RETENTION_MS = 24 * 60 * 60 * 1000;

export const idempotencyStore = (db: Db) => ({
  /**
   * Claims the key in db's transaction, as the hot path does (claimQuery). A refusal is an error:
   * claimRefusal tells another transaction holding the key from a live record.
   */
  async claim(projectId: string, key: string, now: Date): Promise<void> {
    await db.query(claimQuery(projectId, key, now));
  },

  /** Records the outcome, in the transaction of a claim (which removed any expired record of the key). */
  async record(projectId: string, key: string, outcome: Recorded, now: Date) {
    await db.query(recordQuery(projectId, key, outcome, now)).catch(recordConflict);
  },

  /** Forgets records older than 24 hours, a batch at a time; returns how many went. */
  async purge(now: Date, batch = 5000): Promise<number> {
    const result = await db.query(
      `delete from idempotency_keys
        where ctid = any (array(
          select ctid from idempotency_keys where created_at <= $1 limit $2
        ))`,
      [new Date(now.getTime() - RETENTION_MS), batch],
    );
    return result.rowCount ?? 0;
  },
});

export class RecordedMeanwhile extends Error {}

/**
 * Rethrows a failed record: as RecordedMeanwhile when a live record of the key committed meanwhile (the
 * insert met the primary key: a race the lock narrows but cannot close), as itself otherwise.
 */
export function recordConflict(error: unknown): never {
  if ((error as { code?: string }).code === '23505') throw new RecordedMeanwhile();
  throw error;
}

// The hot path (src/http/idempotency.ts) sends the claim in one query string with BEGIN and the
// operation's first statement, and the record in one with COMMIT: the claim, the operation and the record
// take two round trips, and a replay one. There these statements run as EXECUTEs of statements prepared
// on the connection, their values as literals (see inline.ts).

/** The claim as one call of idempotency_claim (migration 0006), which raises to refuse. */
export function claimQuery(projectId: string, key: string, now: Date): pg.QueryConfig {
  return {
    name: 'idempotency-claim',
    text: 'select idempotency_claim($1, $2, $3)',
    values: [projectId, key, new Date(now.getTime() - RETENTION_MS)],
  };
}

/** What a refused claim says: another transaction holds the key, or the key's live record. */
export function claimRefusal(error: unknown): 'busy' | Recorded | undefined {
  const { code, detail } = error as { code?: string; detail?: string };
  if (code === 'PCBSY') return 'busy';
  if (code !== 'PCREC' || detail === undefined) return undefined;
  const [status = '', fingerprint = '', sealedBody = ''] = detail.split(' ');
  return {
    status: Number(status),
    fingerprint: Buffer.from(fingerprint, 'hex'),
    sealedBody: sealedBody === '' ? null : Buffer.from(sealedBody, 'hex'),
  };
}

/**
 * The record, sent just before COMMIT. A live record committed meanwhile makes the insert fail on the
 * primary key, which aborts the transaction before its COMMIT runs: the unique index decides.
 */
export function recordQuery(projectId: string, key: string, outcome: Recorded, now: Date): pg.QueryConfig {
  return {
    name: 'idempotency-insert',
    text: `insert into idempotency_keys (project_id, key, fingerprint, status, sealed_body, created_at)
           values ($1, $2, $3, $4, $5, $6)`,
    values: [projectId, key, outcome.fingerprint, outcome.status, outcome.sealedBody, now],
  };
}
