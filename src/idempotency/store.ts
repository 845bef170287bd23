// The SQL of idempotency records. The claim and the record are statement builders, not calls: the
// pipeline (pipeline.ts) sends them in one query string with the operation's own statements.
import type pg from 'pg';
import type { Db } from '../db/database.ts';

/** The key a request claims, and what the request is. */
export interface Claim {
  projectId: string;
  key: string;
  fingerprint: Buffer;
  now: Date;
}

export interface Recorded {
  fingerprint: Buffer;
  status: number;
  /** the response body, sealed; null when there was none */
  sealedBody: Buffer | null;
}

export const RETENTION_MS = 24 * 60 * 60 * 1000;

/** The claim as one call of idempotency_claim (migration 0006), which raises to refuse. */
export function claimQuery(projectId: string, key: string, now: Date): pg.QueryConfig {
  return {
    name: 'idempotency-claim',
    text: 'select idempotency_claim($1, $2, $3)',
    values: [projectId, key, cutoffOf(now)],
  };
}

/** The time before which a record is forgotten. */
export const cutoffOf = (now: Date) => new Date(now.getTime() - RETENTION_MS);

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
 * primary key (recordedMeanwhile), which aborts the transaction before its COMMIT runs: the unique index
 * decides.
 */
export function recordQuery(projectId: string, key: string, outcome: Recorded, now: Date): pg.QueryConfig {
  return {
    name: 'idempotency-insert',
    text: `insert into idempotency_keys (project_id, key, fingerprint, status, sealed_body, created_at)
           values ($1, $2, $3, $4, $5, $6)`,
    values: [projectId, key, outcome.fingerprint, outcome.status, outcome.sealedBody, now],
  };
}

/** Whether a failed record met a record of the key that committed meanwhile (not another unique index). */
export const recordedMeanwhile = (error: unknown) => {
  const { code, table } = error as { code?: string; table?: string };
  return code === '23505' && table === 'idempotency_keys';
};

export const idempotencyStore = (db: Db) => ({
  /** Forgets records older than 24 hours, a batch at a time; returns how many went. */
  async purge(now: Date, batch = 5000): Promise<number> {
    const result = await db.query(
      `delete from idempotency_keys
        where ctid = any (array(
          select ctid from idempotency_keys where created_at <= $1 limit $2
        ))`,
      [cutoffOf(now), batch],
    );
    return result.rowCount ?? 0;
  },
});
