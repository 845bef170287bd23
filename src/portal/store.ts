// The SQL of portal sessions: made with their code, exchanged (the code for the token) in one statement,
// found by their token with their project, listed and revoked.
import { type Db, isoColumn } from '../db/database.ts';
import { keyset, type Page } from '../lib/pagination.ts';
import type { ProjectRow } from '../projects/store.ts';

export interface SessionRow {
  id: string;
  language: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

/** A session found by its token: what a request made with it acts as. */
export interface ActiveSession {
  id: string;
  key_id: string;
  scopes: string[];
  language: string;
  expires_at: Date;
  project: ProjectRow;
}

const RECORD = `id, language, ${isoColumn('created_at')}, ${isoColumn('expires_at')}, ${isoColumn('revoked_at')}`;

export const portalStore = (db: Db) => ({
  async insert(session: {
    projectId: string;
    keyId: string;
    scopes: string[];
    language: string;
    codeHash: Buffer;
    ttlSeconds: number;
    codeTtlSeconds: number;
  }): Promise<SessionRow> {
    const { rows } = await db.query<SessionRow>(
      `insert into portal_sessions (project_id, key_id, scopes, language, code_hash, code_expires_at, expires_at)
       values ($1, $2, $3, $4, $5, now() + make_interval(secs => $6), now() + make_interval(secs => $7))
       returning ${RECORD}`,
      [
        session.projectId,
        session.keyId,
        session.scopes,
        session.language,
        session.codeHash,
        session.codeTtlSeconds,
        session.ttlSeconds,
      ],
    );
    return rows[0] as SessionRow;
  },

  /** The code traded for the token, once: a code used, late, or of a session that ended finds nothing. */
  async exchange(codeHash: Buffer, tokenHash: Buffer): Promise<ActiveSession | undefined> {
    const { rows } = await db.query<ActiveSession>(
      `update portal_sessions s set code_hash = null, token_hash = $2
         from projects p, api_keys k
        where s.code_hash = $1 and s.code_expires_at > now() and s.expires_at > now()
          and s.revoked_at is null and p.id = s.project_id and k.id = s.key_id and k.revoked_at is null
          and (k.expires_at is null or k.expires_at > now())
       returning s.id, s.key_id, s.scopes, s.language, s.expires_at, to_jsonb(p) as project`,
      [codeHash, tokenHash],
    );
    return rows[0];
  },

  /** The live session holding this token (its key still valid), with its project. */
  async findByToken(tokenHash: Buffer): Promise<ActiveSession | undefined> {
    const { rows } = await db.query<ActiveSession>({
      name: 'portal-session-by-token',
      text: `select s.id, s.key_id, s.scopes, s.language, s.expires_at, to_jsonb(p) as project
               from portal_sessions s
               join projects p on p.id = s.project_id
               join api_keys k on k.id = s.key_id
              where s.token_hash = $1 and s.expires_at > now() and s.revoked_at is null
                and k.revoked_at is null and (k.expires_at is null or k.expires_at > now())`,
      values: [tokenHash],
    });
    return rows[0];
  },

  /** A project's sessions, newest first. */
  async list(projectId: string, page: Page): Promise<SessionRow[]> {
    const paged = keyset(page, { at: 'created_at', order: 'newest', first: 2 });
    const { rows } = await db.query<SessionRow>(
      `select ${RECORD} from portal_sessions where project_id = $1 ${paged.sql}`,
      [projectId, ...paged.values],
    );
    return rows;
  },

  /** Revokes the project's session unless it already is: whether this call revoked it (none: no such session). */
  async revoke(projectId: string, id: string): Promise<{ revokedNow: boolean } | undefined> {
    const { rows } = await db.query<{ revoked_now: boolean }>(
      `update portal_sessions set revoked_at = coalesce(revoked_at, now())
        where project_id = $1 and id = $2
       returning revoked_at = now() as revoked_now`,
      [projectId, id],
    );
    return rows[0] && { revokedNow: rows[0].revoked_now };
  },
});
