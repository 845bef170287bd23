// The SQL of erasure across capabilities (migration 0019): one task per capability asked about an erasure,
// its subject sealed while it is pending and forgotten once it is settled, and the erasure's own state.
import type { Db } from '../db/database.ts';

export type TaskState = 'pending' | 'complete' | 'failed' | 'skipped';

export interface TaskRow {
  erasure_id: string;
  project_id: string;
  capability: string;
  mode: 'push' | 'pull';
  state: TaskState;
  sealed_subject: Buffer | null;
  erased: number | null;
  attempts: number;
  last_error: string | null;
  created_at: Date;
}

const COLUMNS = `erasure_id, project_id, capability, mode, state, sealed_subject, erased, attempts, last_error, created_at`;

export const erasureTasks = (db: Db) => ({
  async insert(
    projectId: string,
    erasureId: string,
    tasks: { capability: string; mode: 'push' | 'pull'; sealedSubject: Buffer }[],
    /** when the background may first push them (the request pushes them until then) */
    backgroundFrom: Date,
  ) {
    if (tasks.length === 0) return;
    await db.query(
      `insert into erasure_tasks (project_id, erasure_id, next_attempt_at, capability, mode, sealed_subject)
       select $1, $2, $3, * from unnest($4::text[], $5::text[], $6::bytea[])`,
      [
        projectId,
        erasureId,
        backgroundFrom,
        tasks.map((t) => t.capability),
        tasks.map((t) => t.mode),
        tasks.map((t) => t.sealedSubject),
      ],
    );
  },

  /** The tasks of an erasure, by capability. */
  async of(erasureId: string): Promise<TaskRow[]> {
    const { rows } = await db.query<TaskRow>(
      `select ${COLUMNS} from erasure_tasks where erasure_id = $1 order by capability`,
      [erasureId],
    );
    return rows;
  },

  /** Settles a pending task with the capability's count; whether it was pending. */
  async complete(erasureId: string, capability: string, erased: number): Promise<boolean> {
    const result = await db.query(
      `update erasure_tasks set state = 'complete', erased = $3, sealed_subject = null, completed_at = now(),
              attempts = attempts + 1, last_error = null
        where erasure_id = $1 and capability = $2 and state = 'pending'`,
      [erasureId, capability, erased],
    );
    return (result.rowCount ?? 0) > 0;
  },

  /** A push that got no answer (or not one that counts): tried again at `retryAt`. */
  async missed(erasureId: string, capability: string, error: string, retryAt: Date) {
    await db.query(
      `update erasure_tasks set attempts = attempts + 1, last_error = $3, next_attempt_at = $4
        where erasure_id = $1 and capability = $2 and state = 'pending'`,
      [erasureId, capability, error.slice(0, 500), retryAt],
    );
  },

  /** Pushed tasks due again, taken for `leaseSeconds` (another worker will not take them meanwhile). */
  async due(limit: number, leaseSeconds: number): Promise<TaskRow[]> {
    const { rows } = await db.query<TaskRow>(
      `update erasure_tasks t set next_attempt_at = now() + make_interval(secs => $2)
         from (select erasure_id, capability from erasure_tasks
                where state = 'pending' and mode = 'push' and next_attempt_at <= now()
                order by next_attempt_at limit $1 for update skip locked) due
        where t.erasure_id = due.erasure_id and t.capability = due.capability
       returning ${COLUMNS.split(', ')
         .map((c) => `t.${c}`)
         .join(', ')}`,
      [limit, leaseSeconds],
    );
    return rows;
  },

  /** A capability's pending tasks it reads (pull), oldest first. */
  async pulled(capability: string, limit: number): Promise<TaskRow[]> {
    const { rows } = await db.query<TaskRow>(
      `select ${COLUMNS} from erasure_tasks
        where capability = $1 and state = 'pending' and mode = 'pull'
        order by created_at, erasure_id limit $2`,
      [capability, limit],
    );
    return rows;
  },

  /** A capability's task of an erasure (any state). */
  async find(capability: string, erasureId: string): Promise<TaskRow | undefined> {
    const { rows } = await db.query<TaskRow>(
      `select ${COLUMNS} from erasure_tasks where erasure_id = $1 and capability = $2`,
      [erasureId, capability],
    );
    return rows[0];
  },

  /** Pending tasks older than the window: failed, their subject forgotten. The tasks. */
  async fail(windowSeconds: number): Promise<TaskRow[]> {
    const { rows } = await db.query<TaskRow>(
      `update erasure_tasks set state = 'failed', sealed_subject = null, completed_at = now()
        where state = 'pending' and created_at < now() - make_interval(secs => $1)
       returning ${COLUMNS}`,
      [windowSeconds],
    );
    return rows;
  },

  /** A removed capability's pending tasks: skipped, and the erasures they held ended. */
  async skipOf(capability: string): Promise<void> {
    const { rows } = await db.query<{ erasure_id: string }>(
      `update erasure_tasks set state = 'skipped', sealed_subject = null, completed_at = now()
        where state = 'pending' and capability = $1
       returning erasure_id`,
      [capability],
    );
    if (rows.length > 0) await this.finish(rows.map((row) => row.erasure_id));
  },

  /** Pending tasks of capabilities no longer asked (removed, or erasure taken out of their manifest). */
  async skipAllBut(asked: string[]): Promise<TaskRow[]> {
    const { rows } = await db.query<TaskRow>(
      `update erasure_tasks set state = 'skipped', sealed_subject = null, completed_at = now()
        where state = 'pending' and capability <> all($1::text[])
       returning ${COLUMNS}`,
      [asked],
    );
    return rows;
  },

  /**
   * Ends the erasures whose tasks are all settled: failed when a task failed, else complete. Of the
   * given erasures, or every pending one.
   */
  async finish(erasureIds?: string[]): Promise<number> {
    const result = await db.query(
      `update erasures e set state = case when exists (select from erasure_tasks t where t.erasure_id = e.id and t.state = 'failed')
                                          then 'failed' else 'complete' end,
                             completed_at = now()
        where e.state = 'pending' and ($1::uuid[] is null or e.id = any($1::uuid[]))
          and not exists (select from erasure_tasks t where t.erasure_id = e.id and t.state = 'pending')`,
      [erasureIds ?? null],
    );
    return result.rowCount ?? 0;
  },
});
