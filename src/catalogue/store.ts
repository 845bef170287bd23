import type { Db } from '../db/database.ts';
import { patternsOf } from '../lib/patterns.ts';

export interface EventTypeRow {
  name: string;
  description: string;
  schema: object | null;
  example: object | null;
  /** null for the platform's types, declared in code */
  created_at: Date | null;
}

/** The most event types a project may declare. */
export const EVENT_TYPES_PER_PROJECT = 1000;
/** The most its schemas may weigh together, as JSON text: what each process may cache of a project. */
export const SCHEMA_BYTES_PER_PROJECT = 4 * 1024 * 1024;

/** A declared type's version: when it last changed, in whole microseconds (exact, unlike a Date). */
export const VERSION = '(extract(epoch from updated_at) * 1000000)::bigint';

export const eventTypeStore = (db: Db) => ({
  /**
   * Creates or replaces a declared type, in the caller's transaction, unless the project is at one of its
   * limits (which is then named). A lock on the project's catalogue comes first, in a statement of its own,
   * so that the count the insert checks sees every declaration committed before it (20 concurrent
   * declarations at 990 ended at 1,008 without it).
   */
  async put(
    projectId: string,
    type: Omit<EventTypeRow, 'created_at'>,
  ): Promise<EventTypeRow | 'types' | 'bytes'> {
    await db.query(`select pg_advisory_xact_lock(hashtextextended('event-types ' || $1, 0))`, [projectId]);
    const { rows } = await db.query<EventTypeRow & { full: boolean }>(
      `with others as (
         select count(*) as types, coalesce(sum(octet_length(schema::text)), 0) as bytes
           from event_types where project_id = $1 and name <> $2
       ), put as (
         insert into event_types (project_id, name, description, schema, example)
         select $1, $2, $3, $4, $5 from others
          where types < $6 and bytes + coalesce(octet_length($4::jsonb::text), 0) <= $7
         on conflict (project_id, name) do update
            set description = excluded.description, schema = excluded.schema, example = excluded.example,
                updated_at = now()
         returning name, description, schema, example, created_at
       )
       select put.*, others.types >= $6 as full from others left join put on true`,
      [
        projectId,
        type.name,
        type.description,
        type.schema,
        type.example,
        EVENT_TYPES_PER_PROJECT,
        SCHEMA_BYTES_PER_PROJECT,
      ],
    );
    const row = rows[0];
    if (!row?.name) return row?.full ? 'types' : 'bytes';
    const { full: _, ...put } = row;
    return put;
  },

  async list(projectId: string) {
    const { rows } = await db.query<EventTypeRow>(
      `select name, description, schema, example, created_at from event_types where project_id = $1 order by name`,
      [projectId],
    );
    return rows;
  },

  /** A declared type's example: undefined when the project declares no such type. */
  async example(projectId: string, name: string): Promise<object | null | undefined> {
    const { rows } = await db.query<{ example: object | null }>(
      `select example from event_types where project_id = $1 and name = $2`,
      [projectId, name],
    );
    return rows[0]?.example;
  },

  /** Each declared type's schema (as text) and version (its last change, in µs: what a statement compares). */
  async declared(projectId: string) {
    const { rows } = await db.query<{ name: string; schema: string | null; version: number }>({
      name: 'event-types-declared',
      text: `select name, schema::text as schema, ${VERSION} as version from event_types where project_id = $1`,
      values: [projectId],
    });
    return rows;
  },

  async delete(projectId: string, name: string) {
    const { rowCount } = await db.query(`delete from event_types where project_id = $1 and name = $2`, [
      projectId,
      name,
    ]);
    return rowCount === 1;
  },

  /** How many active endpoints of the project take each of these types. */
  async subscribers(projectId: string, names: string[]) {
    const { rows } = await db.query<{ name: string; subscribers: number }>(
      `select n.name, count(w.id)::int as subscribers
         from unnest($2::text[]) as n(name)
        cross join ${patternsOf('n.name')} t
         left join webhook_endpoints w on w.project_id = $1 and w.active and w.event_types && t.patterns
        group by n.name`,
      [projectId, names],
    );
    return new Map(rows.map((r) => [r.name, r.subscribers]));
  },
});
