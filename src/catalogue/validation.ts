// JSON Schema (2020-12) of event data: a schema is compiled once and kept (by its text) for every publish
// that needs it. Patterns run on RE2 (linear time), so no schema a project declares can make a publish
// backtrack for seconds.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';
import { type FieldError, PlatformError } from '../errors.ts';

/** At most this many problems are reported for one document. */
const MAX_ERRORS = 20;

const ajv = new Ajv2020({
  allErrors: true,
  // Any valid 2020-12 schema is accepted, unknown keywords included (the specification allows them).
  strict: false,
  // A project's schema is its own: never registered by its $id where another's could meet it.
  addUsedSchema: false,
  // (`code` names the engine for standalone code, which is not generated here.)
  code: { regExp: Object.assign((pattern: string) => RE2JS.compile(pattern), { code: 're2js' }) },
});
addFormats.default(ajv);

const compiled = new LRUCache<string, ValidateFunction>({ max: 1000 });

/** The validator of a schema; a schema that is not valid 2020-12 (or refers outside itself) throws a 400. */
export function validatorOf(schema: object, pointer = '/schema'): ValidateFunction {
  const text = JSON.stringify(schema);
  const known = compiled.get(text);
  if (known) return known;
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema);
  } catch (error) {
    const detail = `not a valid JSON Schema (2020-12): ${(error as Error).message}`;
    throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer, detail }] });
  }
  compiled.set(text, validate);
  return validate;
}

/** Checks a document against a schema; a failure is a 400 with a pointer (under `at`) per problem. */
export function requireValid(schema: object, document: unknown, at: string, what: string): void {
  const validate = validatorOf(schema);
  if (validate(document)) return;
  const errors: FieldError[] = (validate.errors ?? []).slice(0, MAX_ERRORS).map((e) => ({
    pointer: `${at}${e.instancePath}`,
    detail: e.message ?? 'is not valid',
  }));
  throw new PlatformError('VALIDATION_FAILED', `${what} does not match its event type's schema`, { errors });
}
