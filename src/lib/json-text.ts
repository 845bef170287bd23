// JSON as text, read without making JavaScript values of it: what a tenant publishes is delivered as the
// tenant wrote it (numbers past 2^53, member order, escapes), so its data is cut out of the request body's
// own text, never re-serialised. One pass over the text, linear in its length.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

interface Frame {
  /** the names of an object's members so far; null for an array */
  names: Set<string> | null;
  /** an array's next index, or an object's current member name, for pointers */
  at: number | string;
  /** in an object: whether the next string is a member's name */
  expectName: boolean;
}

/** A member name's value from its text between the quotes (as written, when the text is not valid JSON). */
function nameOf(raw: string): string {
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

/**
 * The index of the quote that closes the string whose opening quote is at `start` (the text's length when
 * none does): the next quote not escaped, that is, after an even run of backslashes. Found by indexOf, not
 * a character at a time, which was measurably slower (docs/decisions/measured-choices.md).
 */
function closingQuote(text: string, start: number): number {
  for (let i = text.indexOf('"', start + 1); i !== -1; i = text.indexOf('"', i + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(i - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return i;
  }
  return text.length;
}

const escapePointer = (token: string | number) => String(token).replace(/~/g, '~0').replace(/\//g, '~1');

/** Whether JSON text nests deeper than `max` (a scan of brackets outside strings). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = closingQuote(text, i);
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * The JSON pointer of a member whose name its object already has, in valid JSON text; null when none.
 * Parsers resolve a repeat differently (the last wins here, the first in some receivers), so what is
 * delivered as written must not hold one.
 */
export function repeatedName(text: string): string | null {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      i = closingQuote(text, i);
      const frame = stack.at(-1);
      if (frame?.names && frame.expectName) {
        const name = nameOf(text.slice(start + 1, i));
        if (frame.names.has(name)) {
          return `/${[...stack.map((f) => f.at).slice(0, -1), name].map(escapePointer).join('/')}`;
        }
        frame.names.add(name);
        frame.at = name;
        frame.expectName = false;
      }
    } else if (c === 0x7b || c === 0x5b) {
      stack.push({ names: c === 0x7b ? new Set() : null, at: 0, expectName: c === 0x7b });
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
    } else if (c === 0x2c) {
      const frame = stack.at(-1);
      if (frame?.names) frame.expectName = true;
      else if (frame) frame.at = (frame.at as number) + 1;
    }
  }
  return null;
}

/** The end (exclusive) of the JSON value that starts at `start` of valid JSON text. */
function valueEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
      if (depth === 0) return i + 1;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) return i; // the end of a scalar in a container
      if (--depth === 0) return i + 1;
    } else if (depth === 0 && (c === 0x2c || isSpace(c))) return i;
  }
  return text.length;
}

/** Valid JSON text without the whitespace outside its strings (the same text when it has none). */
export function compact(text: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = closingQuote(text, i);
    else if (isSpace(c)) {
      out += text.slice(from, i);
      from = i + 1;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/** The compact text of a member of the top-level object of valid JSON text; undefined when it has none. */
export function memberText(text: string, name: string): string | undefined {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      i = closingQuote(text, i);
      if (depth !== 1) continue;
      let colon = i + 1;
      while (isSpace(text.charCodeAt(colon))) colon++;
      if (text.charCodeAt(colon) !== 0x3a) continue; // a string value, not a name
      const key = nameOf(text.slice(start + 1, i));
      let value = colon + 1;
      while (isSpace(text.charCodeAt(value))) value++;
      const end = valueEnd(text, value);
      if (key === name) return compact(text.slice(value, end));
      i = end - 1;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return undefined;
}
