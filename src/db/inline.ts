// Statements with their values written in as literals, so that they can share one simple-protocol query
// (one round trip) with others. Values are converted exactly as pg converts query parameters, and are left
// untyped ('…'), as parameters are, so PostgreSQL infers their types from where they stand.
import pg from 'pg';
import { prepareValue } from 'pg/lib/utils.js';

/**
 * The statement with every `$n` replaced by its value: parsed and planned by PostgreSQL on every call. A
 * statement passed here must not hold `$n` inside a quoted literal of its own.
 */
export function inline(config: pg.QueryConfig): string {
  const values = config.values ?? [];
  return config.text.replace(/\$(\d+)/g, (_, n: string) => literal(values[Number(n) - 1]));
}

/** Named statements prepared with SQL PREPARE on each connection (name → text); they live as long as it does. */
const preparedOn = new WeakMap<pg.ClientBase, Map<string, string>>();

/**
 * A named statement as an EXECUTE of a statement prepared on this connection, with its values as
 * literals: it shares a query string as `inline` does, but PostgreSQL plans it once per connection rather
 * than on every call (a planned publish cost as much as its execution). The first use on a connection
 * prepares it, in a round trip of its own. Unnamed statements are inlined.
 */
export async function executable(client: pg.ClientBase, config: pg.QueryConfig): Promise<string> {
  if (!config.name) return inline(config);
  // Prefixed: pg's own named statements (protocol-level) share the connection's namespace.
  const name = pg.escapeIdentifier(`inline:${config.name}`);
  let prepared = preparedOn.get(client);
  if (!prepared) {
    prepared = new Map();
    preparedOn.set(client, prepared);
  }
  const text = prepared.get(name);
  if (text === undefined) {
    await client.query(`prepare ${name} as ${config.text}`);
    prepared.set(name, config.text);
  } else if (text !== config.text) {
    // As pg refuses for its own named statements: one name would otherwise run another statement.
    throw new Error(`the statement name ${config.name} is used for two different statements`);
  }
  const values = config.values ?? [];
  return values.length ? `execute ${name}(${values.map(literal).join(', ')})` : `execute ${name}`;
}

export function literal(value: unknown): string {
  const prepared = prepareValue(value);
  if (prepared === null) return 'null';
  if (Buffer.isBuffer(prepared)) return pg.escapeLiteral(`\\x${prepared.toString('hex')}`);
  return pg.escapeLiteral(prepared);
}
