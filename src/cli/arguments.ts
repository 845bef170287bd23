// What every CLI command does with its words and its output, and nothing more: main.ts loads it to tell
// wrong usage before any command's module (and the service behind it) is loaded.
import { parseArgs } from 'node:util';

/** Wrong usage: exit code 2, with the usage text. */
export class UsageError extends Error {}

type Options = NonNullable<Parameters<typeof parseArgs>[0]>['options'];

/** The command's flags (every command takes --json); positionals when `positionals` is true. */
export function flags<O extends Options>(args: string[], options: O, positionals = false) {
  return parseArgs({
    args,
    options: { ...options, json: { type: 'boolean', default: false } },
    allowPositionals: positionals,
  });
}

/** Flags a command cannot do without. */
export function required<T extends Record<string, unknown>, K extends keyof T & string>(
  values: T,
  command: string,
  names: K[],
): { [P in K]-?: Exclude<T[P], undefined> } {
  const missing = names.filter((name) => values[name] === undefined);
  if (missing.length)
    throw new UsageError(`${command} needs ${missing.map((name) => `--${name}`).join(', ')}`);
  return values as unknown as { [P in K]-?: Exclude<T[P], undefined> };
}

/** One JSON object with --json, else the text. */
export function print(json: boolean | undefined, value: unknown, text: () => string) {
  console.log(json ? JSON.stringify(value) : text());
}

/** A comma-separated list. */
export const list = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
