// The event-type catalogue: the types a project declares (name, description, an optional JSON Schema of
// `data`, an example), and the platform's own, declared by the capabilities in the registry. A type with
// a schema has its data checked on publish. The platform's namespace (`core.`) and the types of other
// capabilities are theirs: a project cannot declare them.

import type { Db } from '../db/database.ts';
import { notFound, PlatformError } from '../lib/errors.ts';
import type { CapabilityRegistry } from '../registry.ts';
import { SCHEMA_MAX_BYTES } from './bounds.ts';
import type { DeclaredTypes } from './declared.ts';
import { EVENT_TYPE } from './schema.ts';
import {
  EVENT_TYPES_PER_PROJECT,
  type EventTypeRow,
  eventTypeStore,
  SCHEMA_BYTES_PER_PROJECT,
} from './store.ts';
import type { TenantSchemas } from './validation.ts';

const EVENT_TYPE_NAME = new RegExp(`^${EVENT_TYPE}$`);

export interface EventType {
  name: string;
  description: string;
  schema: object | null;
  example: object | null;
  source: 'project' | 'platform';
  subscribers: number;
  createdAt: string | null;
}

export interface EventTypeInput {
  description: string;
  schema?: object | null;
  example?: object | null;
}

/** The JSON text of each platform type's schema (declared in code, so kept as long as the object). */
const platformSchemas = new WeakMap<object, string>();
const textOf = (schema: object) => {
  const known = platformSchemas.get(schema);
  if (known) return known;
  const text = JSON.stringify(schema);
  platformSchemas.set(schema, text);
  return text;
};

export const eventCatalogue = (db: Db, registry: CapabilityRegistry, schemas: TenantSchemas) => {
  const store = eventTypeStore(db);
  const platformType = (name: string) => registry.eventTypes().find((t) => t.name === name);

  return {
    async put(projectId: string, name: string, input: EventTypeInput): Promise<EventType> {
      if (!EVENT_TYPE_NAME.test(name) || name.length > 128) {
        const detail = 'a dotted lowercase name such as pay.payment.succeeded, at most 128 characters';
        throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ parameter: 'name', detail }] });
      }
      const owner = registry.list().find((c) => name.startsWith(`${c.name}.`));
      if (name.startsWith('core.') || platformType(name) || owner) {
        const detail = `${name} is declared by the platform${owner ? ` (the ${owner.name} capability's name)` : ''}`;
        throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ parameter: 'name', detail }] });
      }
      const schema = input.schema ?? null;
      const example = input.example ?? null;
      if (example && Buffer.byteLength(JSON.stringify(example)) > SCHEMA_MAX_BYTES) {
        const detail = 'an example weighs at most 64 KiB as JSON';
        throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer: '/example', detail }] });
      }
      if (schema) {
        const text = await schemas.declare(schema);
        if (example) await schemas.check(text, JSON.stringify(example), '/example', 'the example', true);
      }
      const row = await store.put(projectId, { name, description: input.description, schema, example });
      if (row === 'types' || row === 'bytes') {
        const detail =
          row === 'types'
            ? `a project can declare at most ${EVENT_TYPES_PER_PROJECT} event types`
            : `a project's schemas weigh at most ${SCHEMA_BYTES_PER_PROJECT / 1024 / 1024} MiB together`;
        throw new PlatformError('EVENT_TYPE_LIMIT_REACHED', detail);
      }
      const subscribers = await store.subscribers(projectId, [name]);
      return toRecord(row, 'project', subscribers.get(name) ?? 0);
    },

    /** The platform's types and the project's, by name, with how many active endpoints take each. */
    async list(projectId: string): Promise<EventType[]> {
      const own = await store.list(projectId);
      const platform = registry.eventTypes().map(
        (t): EventTypeRow => ({
          name: t.name,
          description: t.description,
          schema: t.schema ?? null,
          example: t.example ?? null,
          created_at: null,
        }),
      );
      const names = [...platform, ...own].map((t) => t.name);
      const subscribers = await store.subscribers(projectId, names);
      return [
        ...platform.map((t) => toRecord(t, 'platform', subscribers.get(t.name) ?? 0)),
        ...own.map((t) => toRecord(t, 'project', subscribers.get(t.name) ?? 0)),
      ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },

    /** The example of a type of the catalogue (the platform's or the project's); undefined: no such type. */
    async exampleOf(projectId: string, name: string): Promise<object | null | undefined> {
      const platform = registry.eventTypes().find((t) => t.name === name);
      return platform ? (platform.example ?? null) : store.example(projectId, name);
    },

    async delete(projectId: string, name: string) {
      if (!(await store.delete(projectId, name))) throw notFound('event type');
    },

    /**
     * Checks an event's data (its JSON text) against its type's schema, the platform's or the project's as
     * this process last read it (`declared`: at most a minute old, or read now when `fresh`); the version of the
     * project's type it read, which a statement can hold the type to (null: the project does not declare it).
     */
    async check(
      projectId: string,
      type: string,
      data: string,
      declared: DeclaredTypes,
      fresh: boolean,
    ): Promise<number | null> {
      const platform = platformType(type);
      const own = platform ? undefined : (await declared.of(projectId, fresh)).get(type);
      const schema = platform?.schema ? textOf(platform.schema) : own?.schema;
      try {
        if (schema) await schemas.check(schema, data, '/data', 'the data');
      } catch (error) {
        // A refusal is an answer, recorded: never on a reading that may be old.
        if (!own || fresh) throw error;
        return this.check(projectId, type, data, declared, true);
      }
      return own?.version ?? null;
    },
  };
};

/** The exact types among these entries that the platform does not declare (patterns are not checked). */
export function outsideRegistry(registry: CapabilityRegistry, entries: string[]) {
  const platform = new Set(registry.eventTypes().map((t) => t.name));
  return entries.filter((e) => e !== '*' && !e.endsWith('.*') && !platform.has(e));
}

function toRecord(row: EventTypeRow, source: EventType['source'], subscribers: number): EventType {
  return {
    name: row.name,
    description: row.description,
    schema: row.schema,
    example: row.example,
    source,
    subscribers,
    createdAt: row.created_at ? row.created_at.toISOString() : null,
  };
}
