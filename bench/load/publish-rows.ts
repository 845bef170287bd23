// The rows a publish leaves, written as a hand-written outbox would write them: the event, its delivery's
// history row and queue row, and the idempotency record of its answer, in one plain statement. The
// baseline of `publish`, sent from a raw pg loop (publish-sql.ts) and from a bare HTTP server
// (baselines/publish-bare.ts).
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { newId } from '../../src/lib/ids.ts';

// As long as a publish's sealed answer: {"eventId":…,"deliveries":1} (65 bytes) and 33 of seal (crypto.ts).
export const SEALED_BODY = 98;
const ROWS = `with event as (
    insert into events (project_id, id, type, data, created_at) values ($1, $2, $3, $4, $5)
  ), delivery as (
    insert into deliveries (project_id, id, event_id, event_created_at, endpoint_id, kind, created_at)
    values ($1, $6, $2, $5, $7, 'dispatch', now())
  ), queued as (
    insert into delivery_queue (delivery_id, project_id, event_id, event_created_at, endpoint_id)
    values ($6, $1, $2, $5, $7)
  )
  insert into idempotency_keys (project_id, key, fingerprint, status, sealed_body, created_at)
  values ($1, $8, $9, 202, $10, now())`;

export interface RowsTarget {
  projectId: string;
  endpointId: string;
}

/** The statement of one event of `type` with `data` (JSON text) and its delivery, under `key`. */
export function rowsStatement(target: RowsTarget, type: string, data: string, key: string) {
  const now = new Date();
  const id = newId(now);
  return {
    id,
    query: {
      name: 'publish-rows',
      text: ROWS,
      values: [
        target.projectId,
        id,
        type,
        data,
        now,
        newId(now),
        target.endpointId,
        key,
        randomBytes(32),
        randomBytes(SEALED_BODY),
      ],
    } satisfies pg.QueryConfig,
  };
}
