import pg from 'pg';
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
   * Takes the key's transaction-scoped advisory lock without waiting, and reads the key's live record.
   * `locked: false` means another transaction holds the key: its request is still being processed.
   */
  async claim(projectId: string, key: string, now: Date): Promise<{ locked: boolean; record?: Recorded }> {
    const { rows } = await db.query<{
      locked: boolean;
      fingerprint: Buffer;
      status: number | null;
      sealed_body: Buffer | null;
    }>({
      name: 'idempotency-claim',
      text: `select l.locked, k.fingerprint, k.status, k.sealed_body
               from (select pg_try_advisory_xact_lock(hashtextextended($1::uuid::text || '/' || $2::text, 0)) as locked) l
               left join idempotency_keys k
                 on l.locked and k.project_id = $1::uuid and k.key = $2::text and k.created_at > $3`,
      values: [projectId, key, new Date(now.getTime() - RETENTION_MS)],
    });
    const row = rows[0];
    if (!row?.locked) return { locked: false };
    if (row.status === null) return { locked: true };
    return {
      locked: true,
      record: { fingerprint: row.fingerprint, status: row.status, sealedBody: row.sealed_body },
    };
  },

  /** Records the outcome; an expired record of the same key is replaced. */
  async record(projectId: string, key: string, outcome: Recorded, now: Date) {
    const result = await db.query({
      name: 'idempotency-record',
      text: `insert into idempotency_keys (project_id, key, fingerprint, status, sealed_body, created_at)
             values ($1, $2, $3, $4, $5, $6)
             on conflict (project_id, key) do update
                set fingerprint = excluded.fingerprint, status = excluded.status,
                    sealed_body = excluded.sealed_body, created_at = excluded.created_at
              where idempotency_keys.created_at <= $7`,
      values: [
        projectId,
        key,
        outcome.fingerprint,
        outcome.status,
        outcome.sealedBody,
        now,
        new Date(now.getTime() - RETENTION_MS),
      ],
    });
    // 0 rows: a live record of this key committed meanwhile (a race the lock narrows but cannot close)
    if (result.rowCount === 0) throw new RecordedMeanwhile();
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

// The hot path sends its transaction's first and last statements together with BEGIN and COMMIT, as
// simple-protocol queries: two round trips fewer on every idempotent write (each round trip is a socket
// write and a wake-up on both sides). Those statements carry their values as literals: ids and times are
// ours, the key is escaped by pg's escapeLiteral, bytes go in as hex.
const literal = (value: string) => pg.escapeLiteral(value);
const bytes = (value: Buffer) => `'\\x${value.toString('hex')}'::bytea`;
const lockOf = (projectId: string, key: string) => `hashtextextended(${literal(`${projectId}/${key}`)}, 0)`;

/**
 * BEGIN, then the claim: the key's advisory lock without waiting, an expired record of the key deleted
 * (so that recording is a plain insert), and the live record if there is one.
 */
export function beginAndClaim(projectId: string, key: string, now: Date): string {
  const where = `k.project_id = ${literal(projectId)}::uuid and k.key = ${literal(key)}`;
  const cutoff = `${literal(new Date(now.getTime() - RETENTION_MS).toISOString())}::timestamptz`;
  return `begin;
    with l as (select pg_try_advisory_xact_lock(${lockOf(projectId, key)}) as locked),
    expired as (delete from idempotency_keys k using l where l.locked and ${where} and k.created_at <= ${cutoff})
    select l.locked, k.fingerprint, k.status, k.sealed_body
      from l left join idempotency_keys k on l.locked and ${where} and k.created_at > ${cutoff}`;
}

/**
 * The record, then COMMIT. A live record committed meanwhile makes the insert fail on the primary key,
 * which aborts the transaction before its COMMIT runs: the unique index decides.
 */
export function recordAndCommit(projectId: string, key: string, outcome: Recorded, now: Date): string {
  const body = outcome.sealedBody ? bytes(outcome.sealedBody) : 'null';
  return `insert into idempotency_keys (project_id, key, fingerprint, status, sealed_body, created_at)
    values (${literal(projectId)}, ${literal(key)}, ${bytes(outcome.fingerprint)}, ${Math.trunc(outcome.status)}, ${body},
            ${literal(now.toISOString())}::timestamptz);
    commit`;
}

/** What the claim found, from its row. */
export function claimed(
  row:
    | { locked: boolean; fingerprint: Buffer | null; status: number | null; sealed_body: Buffer | null }
    | undefined,
) {
  if (!row?.locked) return { locked: false as const };
  if (row.status === null || row.fingerprint === null) return { locked: true as const };
  return {
    locked: true as const,
    record: { fingerprint: row.fingerprint, status: row.status, sealedBody: row.sealed_body },
  };
}
