import type { Db } from '../db/database.ts';

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

/** A declared type's version: when it last changed, in whole microseconds (exact, unlike a Date). */
export const VERSION = '(extract(epoch from updated_at) * 1000000)::bigint';

export const eventTypeStore = (db: Db) => ({
  /** Creates or replaces a declared type; nothing when the project is at its limit with a new name. */
  async put(projectId: string, type: Omit<EventTypeRow, 'created_at'>) {
    const { rows } = await db.query<EventTypeRow>(
      `insert into event_types (project_id, name, description, schema, example)
       select $1, $2, $3, $4, $5
        where exists (select 1 from event_types where project_id = $1 and name = $2)
           or (select count(*) from event_types where project_id = $1) < $6
       on conflict (project_id, name) do update
          set description = excluded.description, schema = excluded.schema, example = excluded.example,
              updated_at = now()
       returning name, description, schema, example, created_at`,
      [projectId, type.name, type.description, type.schema, type.example, EVENT_TYPES_PER_PROJECT],
    );
    return rows[0];
  },

  async list(projectId: string) {
    const { rows } = await db.query<EventTypeRow>(
      `select name, description, schema, example, created_at from event_types where project_id = $1 order by name`,
      [projectId],
    );
    return rows;
  },

  /** Each declared type's schema and version (its last change, in µs: what a statement can compare). */
  async declared(projectId: string) {
    const { rows } = await db.query<{ name: string; schema: object | null; version: number }>({
      name: 'event-types-declared',
      text: `select name, schema, ${VERSION} as version from event_types where project_id = $1`,
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

  /** The schema a project declared for a type (undefined: none, or the type is not declared). */
  /** How many active endpoints of the project take each of these types. */
  async subscribers(projectId: string, names: string[]) {
    const { rows } = await db.query<{ name: string; subscribers: number }>(
      `select n.name, count(w.id)::int as subscribers
         from unnest($2::text[]) as n(name)
         left join webhook_endpoints w on w.project_id = $1 and w.active and subscribes(w.event_types, n.name)
        group by n.name`,
      [projectId, names],
    );
    return new Map(rows.map((r) => [r.name, r.subscribers]));
  },
});
