// Statements with their values written in as literals, so that they can share one simple-protocol query
// (one round trip) with others. Values are written as PostgreSQL reads a parameter's text, and are left
// untyped ('…'), as parameters are, so PostgreSQL infers their types from where they stand.
import pg from 'pg';

/**
 * The statement with every `$n` replaced by its value: parsed and planned by PostgreSQL on every call. A
 * statement passed here must not hold `$n` inside a quoted literal of its own.
 */
export function inline(config: pg.QueryConfig): string {
  const values = config.values ?? [];
  return config.text.replace(/\$(\d+)/g, (_, n: string) => literal(values[Number(n) - 1]));
}

/** Named statements prepared with SQL PREPARE on each connection, by name; they live as long as it does. */
const preparedOn = new WeakMap<pg.ClientBase, Map<string, { text: string; execute: string }>>();

/**
 * A named statement as an EXECUTE of a statement prepared on this connection, with its values as
 * literals: it shares a query string as `inline` does, but PostgreSQL plans it once per connection rather
 * than on every call (a planned publish cost as much as its execution). The first use on a connection
 * prepares it, in a round trip of its own. Unnamed statements are inlined.
 *
 * The string is built by concatenation, not joined: V8 keeps it as a rope until pg encodes the whole
 * query string, so a value's text is copied once there rather than once per join on the way (a group
 * commit joins its statements again).
 */
export async function executable(client: pg.ClientBase, config: pg.QueryConfig): Promise<string> {
  if (!config.name) return inline(config);
  let prepared = preparedOn.get(client);
  if (!prepared) {
    prepared = new Map();
    preparedOn.set(client, prepared);
  }
  let statement = prepared.get(config.name);
  if (statement === undefined) {
    // Prefixed: pg's own named statements (protocol-level) share the connection's namespace.
    const name = pg.escapeIdentifier(`inline:${config.name}`);
    await client.query(`prepare ${name} as ${config.text}`);
    statement = { text: config.text, execute: `execute ${name}` };
    prepared.set(config.name, statement);
  } else if (statement.text !== config.text) {
    // As pg refuses for its own named statements: one name would otherwise run another statement.
    throw new Error(`the statement name ${config.name} is used for two different statements`);
  }
  const values = config.values ?? [];
  if (values.length === 0) return statement.execute;
  let text = `${statement.execute}(${literal(values[0])}`;
  for (let i = 1; i < values.length; i++) text += `, ${literal(values[i])}`;
  return `${text})`;
}

/** A value as an untyped SQL literal (test/inline.test.ts holds it to what pg sends as a parameter). */
export function literal(value: unknown): string {
  const text = asText(value);
  if (text?.includes('\u0000')) throw NUL_IN_TEXT;
  return text === null ? 'null' : quoted(text);
}

/**
 * Text as a quoted SQL literal, as pg.escapeLiteral writes it (quotes doubled; with a backslash, the
 * backslashes doubled in an E'' literal). pg's builds the literal a character at a time, fifty times
 * slower than replaceAll on a publish's data (docs/decisions/measured-choices.md).
 */
function quoted(text: string): string {
  const body = text.includes("'") ? text.replaceAll("'", "''") : text;
  return text.includes('\\') ? ` E'${body.replaceAll('\\', '\\\\')}'` : `'${body}'`;
}

/**
 * PostgreSQL stores no NUL character in text, and a query string ends at one: a value holding one is
 * refused here with the error PostgreSQL gives such a parameter (22021, mapped to a 400 like every data
 * exception), before it can cut a statement short and break the connection's protocol.
 */
const NUL_IN_TEXT = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), {
  code: '22021',
});

/** The text PostgreSQL parses for a value: bytea as hex, times in UTC, arrays as array literals, objects as JSON. */
function asText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (Buffer.isBuffer(value)) return `\\x${value.toString('hex')}`;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return `{${value.map(arrayElement).join(',')}}`;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function arrayElement(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (Array.isArray(value)) return asText(value) as string;
  return `"${(asText(value) as string).replace(/[\\"]/g, '\\$&')}"`;
}
