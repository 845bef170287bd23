// The audit log (migration 0010): who changed what, written in the transaction of the change, so that an
// entry exists exactly when its effect does. It names the fields that changed, never their values.
import type { Db, TransactionHooks } from '../db/database.ts';
import { keyset, type Page, pageFrom } from '../lib/pagination.ts';

export const AUDIT_ACTIONS = [
  'project.created',
  'project.updated',
  'key.created',
  'key.revoked',
  'limit.set',
  'limit.cleared',
  'subject.erased',
  'portal_session.created',
  'portal_session.revoked',
  'endpoint.created',
  'endpoint.deleted',
  'endpoint.secret_rotated',
  'endpoint.secret_retired',
  'endpoint.updated',
  'capability.created',
  'capability.updated',
  'capability.manifest_put',
  'capability.secret_rotated',
  'capability.secret_retired',
  'capability.removed',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who acts: a key (over the API), or the CLI on the server. */
export type Actor = { type: 'key'; keyId: string } | { type: 'cli' };

/** The actor of a change and the request it came with (a CLI command has an id of its own). */
export interface AuditContext {
  actor: Actor;
  requestId: string;
}

export interface AuditEntry {
  action: AuditAction;
  projectId: string | null;
  target: { type: string; id: string };
  /** the names of the fields that changed */
  fields?: string[];
}

interface AuditRow {
  id: string;
  at: string;
  actor_type: 'key' | 'cli';
  actor_key_id: string | null;
  action: string;
  project_id: string | null;
  target_type: string;
  target_id: string;
  request_id: string;
  fields: string[];
}

const toRecord = (row: AuditRow) => ({
  id: row.id,
  at: row.at,
  actor:
    row.actor_type === 'key'
      ? { type: 'key' as const, keyId: row.actor_key_id ?? '' }
      : { type: 'cli' as const },
  action: row.action,
  projectId: row.project_id,
  target: { type: row.target_type, id: row.target_id },
  requestId: row.request_id,
  fields: row.fields,
});

const AT = `to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * How a change is audited: the entry goes into the change's own transaction, sent with its commit (no
 * round trip of its own), so it exists exactly when the change does.
 */
export type Audit = ((entry: AuditEntry) => void) & {
  /** The same actor's audit into another transaction (a change that commits on its own). */
  into(hooks: Pick<TransactionHooks, 'beforeCommit'>): Audit;
};

export function auditInto(context: AuditContext, hooks: Pick<TransactionHooks, 'beforeCommit'>): Audit {
  const { actor } = context;
  const audit = (entry: AuditEntry) =>
    hooks.beforeCommit({
      name: 'audit-insert',
      text: `insert into audit_log (actor_type, actor_key_id, action, project_id, target_type, target_id, request_id, fields)
             values ($1, $2, $3, $4, $5, $6, $7, $8)`,
      values: [
        actor.type,
        actor.type === 'key' ? actor.keyId : null,
        entry.action,
        entry.projectId,
        entry.target.type,
        entry.target.id,
        context.requestId,
        entry.fields ?? [],
      ],
    });
  return Object.assign(audit, {
    into: (other: Pick<TransactionHooks, 'beforeCommit'>) => auditInto(context, other),
  });
}

export const auditLog = (db: Db) => ({
  /** Newest first, filtered by project, action and time. */
  async list(filter: { projectId?: string; action?: string; since?: string }, page: Page) {
    const paged = keyset(page, { at: 'at', order: 'newest', first: 4 });
    const { rows } = await db.query<AuditRow>(
      `select id, ${AT} as at, actor_type, actor_key_id, action, project_id, target_type, target_id, request_id, fields
         from audit_log
        where ($1::uuid is null or project_id = $1)
          and ($2::text is null or action = $2)
          and ($3::timestamptz is null or at >= $3)
          ${paged.sql}`,
      [filter.projectId ?? null, filter.action ?? null, filter.since ?? null, ...paged.values],
    );
    const listed = pageFrom(rows, page.limit, (row) => ({ at: row.at, id: row.id }));
    return { data: listed.data.map(toRecord), nextCursor: listed.nextCursor };
  },
});
