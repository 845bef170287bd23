// The JSON Schema (2020-12) engine event data is checked with, as the validation thread runs it: Ajv,
// with every keyword whose usual implementation a tenant could make slow replaced by a linear one:
// `pattern` runs on RE2, `format`s are linear (formats.ts), and `uniqueItems` compares items by a
// canonical text in a hash set instead of every pair (30,000 items took 5 s pairwise). What stays
// superlinear (composition multiplied by recursion, enums against many items) is cut by the thread's
// budget (validation-thread.ts).
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { RE2JS } from 're2js';
import type { FieldError } from '../lib/errors.ts';
import { LINEAR_FORMATS } from './formats.ts';

/** At most this many problems are reported for one document. */
export const MAX_ERRORS = 20;

/** JSON's equality as text: object members sorted by name; numbers as JavaScript writes them (1.0 is 1). */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const names = Object.keys(value).sort();
  const members = names.map((name) => `${JSON.stringify(name)}:${canonical((value as never)[name])}`);
  return `{${members.join(',')}}`;
}

type KeywordValidate = ((enabled: boolean, items: unknown[]) => boolean) & {
  errors?: Partial<ErrorObject>[];
};

const uniqueItems: KeywordValidate = (enabled, items) => {
  if (!enabled) return true;
  // Scalars are their own keys (a Map equates 0 and -0, as JSON does); objects and arrays their text.
  const seen = new Map<unknown, number>();
  for (let j = 0; j < items.length; j++) {
    const item = items[j];
    const key = item !== null && typeof item === 'object' ? `\u0000${canonical(item)}` : item;
    const i = seen.get(key);
    if (i !== undefined) {
      uniqueItems.errors = [
        {
          keyword: 'uniqueItems',
          message: `must NOT have duplicate items (items ## ${i} and ${j} are identical)`,
          params: { i, j },
        },
      ];
      return false;
    }
    seen.set(key, j);
  }
  return true;
};

export type Engine = Ajv2020;

export function createEngine(): Engine {
  const engine = new Ajv2020({
    allErrors: true,
    // Any valid 2020-12 schema is accepted, unknown keywords included (the specification allows them).
    strict: false,
    // A project's schema is its own: never registered by its $id where another's could meet it.
    addUsedSchema: false,
    formats: LINEAR_FORMATS,
    code: {
      // Half the compile time of a large schema, for no measurable cost in validation.
      optimize: false,
      // (`code` names the engine for standalone code, which is not generated here.)
      regExp: Object.assign((pattern: string) => RE2JS.compile(pattern), { code: 're2js' }),
    },
  });
  engine.removeKeyword('uniqueItems');
  engine.addKeyword({
    keyword: 'uniqueItems',
    type: 'array',
    schemaType: 'boolean',
    errors: true,
    validate: uniqueItems as never,
  });
  return engine;
}

/** The problems of a failed validation, each with a pointer under `at` (at most MAX_ERRORS). */
export function problemsOf(validate: ValidateFunction, at: string): FieldError[] {
  return (validate.errors ?? []).slice(0, MAX_ERRORS).map((e) => ({
    pointer: `${at}${e.instancePath}`,
    detail: e.message ?? 'is not valid',
  }));
}
