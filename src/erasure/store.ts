import type { Db } from '../db/database.ts';
import { redactResponses } from '../delivery-store/state.ts';

export const erasureStore = (db: Db) => ({
  /**
   * Redacts the payload of the project's events tagged with the subject (ids, types and times stay for
   * audit), and the captured responses of their delivery attempts, which may echo the payload. A subject's
   * events may be of any day: each retained day's partition is looked into, by index.
   */
  async redactEvents(projectId: string, subjectHmac: Buffer, now: Date): Promise<number> {
    const { rows } = await db.query<{ redacted: number }>(
      `with tagged as (
         select event_id, event_created_at from event_subjects where project_id = $1 and subject_hmac = $2
       ), events_redacted as (
         update events e set data = '{"redacted": true}', data_jsonb = null, redacted_at = $3
           from tagged t
          where e.project_id = $1 and e.id = t.event_id and e.created_at = t.event_created_at
            and e.redacted_at is null
         returning e.id
       ), ${redactResponses({ from: 'tagged t', project: '$1', event: 't.event_id', createdAt: 't.event_created_at' })}
       select count(*)::int as redacted from events_redacted`,
      [projectId, subjectHmac, now],
    );
    return rows[0]?.redacted ?? 0;
  },

  /** The erasure's record (pending while capabilities are still to answer); its id. */
  async record(entry: {
    projectId: string;
    subjectType: string;
    subjectHmac: Buffer;
    keyId: string | null;
    capabilities: { capability: string; erased: number }[];
    pending: boolean;
    at: Date;
  }) {
    const { rows } = await db.query<{ id: string }>(
      `insert into erasures (project_id, subject_type, subject_hmac, key_id, capabilities, state, completed_at, created_at)
       values ($1, $2, $3, $4, $5, case when $6 then 'pending' else 'complete' end, case when $6 then null else $7::timestamptz end, $7)
       returning id`,
      [
        entry.projectId,
        entry.subjectType,
        entry.subjectHmac,
        entry.keyId,
        JSON.stringify(entry.capabilities),
        entry.pending,
        entry.at,
      ],
    );
    return (rows[0] as { id: string }).id;
  },

  /** A project's erasure: its state, what the capabilities in this process erased, when. */
  async find(projectId: string, id: string) {
    const { rows } = await db.query<{
      id: string;
      state: 'complete' | 'pending' | 'failed';
      capabilities: { capability: string; erased: number }[];
      created_at: Date;
      completed_at: Date | null;
    }>(
      `select id, state, capabilities, created_at, completed_at from erasures where project_id = $1 and id = $2`,
      [projectId, id],
    );
    return rows[0];
  },
});
