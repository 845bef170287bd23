// An endpoint's filter (contract 0.4): an Amazon EventBridge event pattern over {type, data}, checked and
// compiled once, when it is set, into a SQL/JSON path predicate that PostgreSQL evaluates where the
// deliveries are queued (lib/patterns.ts, `filtered`). A pattern is a tenant's code: it is at most 4 KiB
// and 8 levels deep, compiling it is linear in its size, and the predicate it becomes has no wildcard, no
// recursion and no regular expression of the tenant's (a suffix or a case-insensitive match becomes an
// anchored literal), so its cost is linear in the pattern and the event. It never runs on the shared loop.
import { PlatformError } from '../lib/errors.ts';

export const MAX_FILTER_BYTES = 4096;
export const MAX_FILTER_DEPTH = 8;
/** Values and matchers in one pattern: each is checked against every value an event's field holds. */
export const MAX_FILTER_MATCHERS = 100;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Pattern = { [key: string]: Json };

class Invalid extends Error {
  readonly pointer: string;
  constructor(pointer: string, detail: string) {
    super(detail);
    this.pointer = pointer;
  }
}

/** The pattern compiled into a SQL/JSON path predicate over {"type", "data"}; a 400 with a pointer if invalid. */
export function compileFilter(pattern: unknown): string {
  if (Buffer.byteLength(JSON.stringify(pattern)) > MAX_FILTER_BYTES) {
    refuse('/filter', `a filter is at most ${MAX_FILTER_BYTES} bytes of JSON`);
  }
  try {
    if (!isObject(pattern))
      throw new Invalid('', 'a filter is an object, such as {"data": {"amount": [{"numeric": [">", 100]}]}}');
    for (const key of Object.keys(pattern)) {
      if (key !== 'type' && key !== 'data' && key !== '$or')
        throw new Invalid(`/${tokenOf(key)}`, 'a filter matches the event’s type and data only');
    }
    const matchers = { count: 0 };
    const compiled = conjunction(pattern, '$', '', 1, matchers);
    if (matchers.count > MAX_FILTER_MATCHERS)
      throw new Invalid('', `a filter holds at most ${MAX_FILTER_MATCHERS} values and matchers`);
    return compiled;
  } catch (error) {
    if (!(error instanceof Invalid)) throw error;
    return refuse(`/filter${error.pointer}`, error.message);
  }
}

function refuse(pointer: string, detail: string): never {
  throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer, detail }] });
}

const isObject = (value: unknown): value is Pattern =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every key of an object pattern holds: its fields' matchers, nested objects, and `$or`. */
function conjunction(
  pattern: Pattern,
  path: string,
  pointer: string,
  depth: number,
  matchers: { count: number },
): string {
  if (depth > MAX_FILTER_DEPTH)
    throw new Invalid(pointer, `a filter is at most ${MAX_FILTER_DEPTH} levels deep`);
  const keys = Object.keys(pattern);
  if (keys.length === 0)
    throw new Invalid(pointer, 'an empty pattern matches nothing; leave the filter null instead');
  const parts = keys.map((key) => {
    const value = pattern[key] as Json;
    const at = `${pointer}/${tokenOf(key)}`;
    if (key === '$or') return alternatives(value, path, at, depth, matchers);
    const field = `${path}.${JSON.stringify(key)}`;
    if (isObject(value)) return conjunction(value, field, at, depth + 1, matchers);
    if (Array.isArray(value)) {
      matchers.count += value.length;
      return anyOf(value, field, at);
    }
    throw new Invalid(at, 'a field’s pattern is an array of values or matchers, or an object of fields');
  });
  return parts.length === 1 ? (parts[0] as string) : `(${parts.join(' && ')})`;
}

function alternatives(
  value: Json,
  path: string,
  pointer: string,
  depth: number,
  matchers: { count: number },
): string {
  if (!Array.isArray(value) || value.length < 2 || !value.every(isObject)) {
    throw new Invalid(pointer, '$or is an array of at least two patterns');
  }
  return `(${value.map((p, i) => conjunction(p as Pattern, path, `${pointer}/${i}`, depth + 1, matchers)).join(' || ')})`;
}

/** A field's matchers: any one of them holds. */
function anyOf(matchers: Json[], field: string, pointer: string): string {
  if (matchers.length === 0) throw new Invalid(pointer, 'an empty array matches nothing');
  const parts = matchers.map((matcher, i) => matcherOf(matcher, field, `${pointer}/${i}`));
  return parts.length === 1 ? (parts[0] as string) : `(${parts.join(' || ')})`;
}

function matcherOf(matcher: Json, field: string, pointer: string): string {
  if (!isObject(matcher)) return `${field} == ${literal(matcher, pointer)}`;
  const [operator, ...more] = Object.keys(matcher);
  if (operator === undefined || more.length > 0) throw new Invalid(pointer, 'a matcher has one operator');
  const operand = matcher[operator] as Json;
  const at = `${pointer}/${tokenOf(operator)}`;
  switch (operator) {
    case 'prefix':
      return `${field} starts with ${JSON.stringify(text(operand, at))}`;
    case 'suffix':
      return `${field} like_regex ${JSON.stringify(`${literalRegex(text(operand, at))}$`)}`;
    case 'equals-ignore-case':
      return `${field} like_regex ${JSON.stringify(`^${literalRegex(text(operand, at))}$`)} flag "i"`;
    case 'exists':
      if (typeof operand !== 'boolean') throw new Invalid(at, 'exists is true or false');
      return operand ? `exists(${field})` : `!exists(${field})`;
    case 'numeric':
      return numeric(operand, field, at);
    case 'anything-but':
      return `(exists(${field}) && !${anythingBut(operand, field, at)})`;
    default:
      throw new Invalid(
        pointer,
        'a matcher is one of prefix, suffix, equals-ignore-case, exists, numeric and anything-but',
      );
  }
}

const NEGATABLE = new Set(['prefix', 'suffix', 'equals-ignore-case']);

function anythingBut(operand: Json, field: string, pointer: string): string {
  if (isObject(operand)) {
    if (!Object.keys(operand).every((key) => NEGATABLE.has(key)))
      throw new Invalid(
        pointer,
        'anything-but takes values, or one of prefix, suffix and equals-ignore-case',
      );
    return `(${matcherOf(operand, field, pointer)})`;
  }
  const values = Array.isArray(operand) ? operand : [operand];
  if (values.length === 0) throw new Invalid(pointer, 'anything-but names at least one value');
  return `(${values.map((v, i) => `${field} == ${literal(v, `${pointer}/${i}`)}`).join(' || ')})`;
}

const COMPARISONS = new Set(['=', '<', '<=', '>', '>=']);

function numeric(operand: Json, field: string, pointer: string): string {
  const pairs: string[] = [];
  if (!Array.isArray(operand) || operand.length === 0 || operand.length > 4 || operand.length % 2 !== 0) {
    throw new Invalid(pointer, 'numeric is one or two comparisons, such as [">", 0, "<=", 5]');
  }
  for (let i = 0; i < operand.length; i += 2) {
    const [op, value] = [operand[i], operand[i + 1]];
    if (typeof op !== 'string' || !COMPARISONS.has(op) || typeof value !== 'number') {
      throw new Invalid(`${pointer}/${i}`, 'a comparison is one of = < <= > >=, then a number');
    }
    pairs.push(`${field} ${op === '=' ? '==' : op} ${value}`);
  }
  return pairs.length === 1 ? (pairs[0] as string) : `(${pairs.join(' && ')})`;
}

/** A value to compare with: a string, a number, true, false or null. */
function literal(value: Json, pointer: string): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value);
  throw new Invalid(pointer, 'a value to match is a string, a number, true, false or null');
}

function text(value: Json, pointer: string): string {
  if (typeof value !== 'string') throw new Invalid(pointer, 'this matcher takes a string');
  return value;
}

/** A string matched as itself by a regular expression: every metacharacter escaped. */
const literalRegex = (value: string) => value.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');

/** A key as a JSON pointer's token. */
const tokenOf = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');
