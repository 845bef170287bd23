// pg converts query parameters with this function; @types/pg does not declare it.
declare module 'pg/lib/utils.js' {
  export function prepareValue(value: unknown): string | Buffer | null;
}
