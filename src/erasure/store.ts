import type { Db } from '../db/database.ts';

export const erasureStore = (db: Db) => ({
  /** Redacts the payload of the project's events tagged with the subject; ids, types and times stay. */
  async redactEvents(projectId: string, subjectHmac: Buffer, now: Date): Promise<number> {
    const result = await db.query(
      `update events e
          set data = '{"redacted": true}', redacted_at = $3
         from event_subjects s
        where s.project_id = $1 and s.subject_hmac = $2
          and e.project_id = s.project_id and e.id = s.event_id
          and e.redacted_at is null`,
      [projectId, subjectHmac, now],
    );
    return result.rowCount ?? 0;
  },

  async audit(entry: {
    projectId: string;
    subjectType: string;
    subjectHmac: Buffer;
    keyId: string;
    capabilities: { capability: string; erased: number }[];
    at: Date;
  }) {
    await db.query(
      `insert into erasures (project_id, subject_type, subject_hmac, key_id, capabilities, created_at)
       values ($1, $2, $3, $4, $5, $6)`,
      [
        entry.projectId,
        entry.subjectType,
        entry.subjectHmac,
        entry.keyId,
        JSON.stringify(entry.capabilities),
        entry.at,
      ],
    );
  },
});
