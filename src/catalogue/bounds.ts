// What a declared schema may weigh, checked on the event loop before anything compiles it (a walk linear
// in the schema, which the body's own limits already bound): its text, how deep it nests, how many
// objects it holds (each one a subschema, or a value an `enum` or `const` compares). Compiling costs about
// 3 ms a KiB on the validation thread, so 64 KiB stays well under its 1-second budget; the reasons are in
// docs/decisions/untrusted-schemas.md.
import { PlatformError } from '../lib/errors.ts';

export const SCHEMA_MAX_BYTES = 64 * 1024;
export const SCHEMA_MAX_DEPTH = 32;
export const SCHEMA_MAX_OBJECTS = 2000;

const refuse = (pointer: string, detail: string) =>
  new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer, detail }] });

/** Throws a 400 naming the limit when the schema (at `pointer` in the body) is over one. */
export function checkSchemaBounds(schema: object, pointer = '/schema'): void {
  if (Buffer.byteLength(JSON.stringify(schema)) > SCHEMA_MAX_BYTES) {
    throw refuse(pointer, 'a schema weighs at most 64 KiB as JSON');
  }
  let objects = 0;
  const walk = (value: unknown, depth: number): void => {
    if (value === null || typeof value !== 'object') return;
    if (depth > SCHEMA_MAX_DEPTH) {
      throw refuse(pointer, `a schema nests at most ${SCHEMA_MAX_DEPTH} levels of objects and arrays`);
    }
    if (!Array.isArray(value) && ++objects > SCHEMA_MAX_OBJECTS) {
      throw refuse(
        pointer,
        `a schema holds at most ${SCHEMA_MAX_OBJECTS.toLocaleString('en')} subschemas (objects of any kind)`,
      );
    }
    for (const member of Array.isArray(value) ? value : Object.values(value)) walk(member, depth + 1);
  };
  walk(schema, 1);
}
