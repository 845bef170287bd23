// A statement with its values written in as literals, so that it can share one simple-protocol query
// (one round trip) with others. Values are converted exactly as pg converts query parameters, and are left
// untyped ('…'), as parameters are, so PostgreSQL infers their types from where they stand. Every `$n` of
// the text is a parameter: a statement passed here must not hold `$n` inside a quoted literal of its own.
import pg from 'pg';
import { prepareValue } from 'pg/lib/utils.js';

export function inline(config: pg.QueryConfig): string {
  const values = config.values ?? [];
  return config.text.replace(/\$(\d+)/g, (_, n: string) => literal(values[Number(n) - 1]));
}

export function literal(value: unknown): string {
  const prepared = prepareValue(value);
  if (prepared === null) return 'null';
  if (Buffer.isBuffer(prepared)) return pg.escapeLiteral(`\\x${prepared.toString('hex')}`);
  return pg.escapeLiteral(prepared);
}
