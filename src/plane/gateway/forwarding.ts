// What the gateway sends upstream and back (docs/capabilities.md). Upstream: the client's headers without
// hop-by-hop ones, its key, its cookies or any x-platform-* header it made up; and the context the
// upstream can trust, signed with the capability's signing secrets: HMAC-SHA256 over
// `<request-id>.<timestamp>.<METHOD>.<path and query as forwarded>.<project-id>.<key-id>.<scopes>`, one
// `v1,<base64>` per secret (two during a rotation), space-separated. Back: the upstream's headers without
// hop-by-hop ones (those its Connection header names included) and set-cookie.
import { createHmac, type KeyObject } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { HOP_BY_HOP } from '../../lib/hop-by-hop.ts';

/** Never forwarded upstream: the project's key and the client's cookies (and the host, which is upstream's). */
const NOT_UPSTREAM = new Set(['x-api-key', 'cookie', 'host', 'idempotency-key']);
/** Never sent back: the client's cookies are the platform's to set, and the request id is the platform's. */
const NOT_BACK = new Set(['set-cookie', 'x-request-id', 'date']);

export interface GatewayContext {
  requestId: string;
  method: string;
  /** the path and query string as the upstream receives them */
  target: string;
  projectId: string;
  keyId: string;
  scopes: ReadonlySet<string>;
  timestamp: number;
}

/**
 * A key's scopes as the context lists them: sorted, comma-separated. Kept per scope set: a key's set comes
 * from the key cache and lives as long as its entry, so each is sorted once, not on every request.
 */
const listedScopes = new WeakMap<ReadonlySet<string>, string>();
function scopesListed(scopes: ReadonlySet<string>): string {
  let listed = listedScopes.get(scopes);
  if (listed === undefined) {
    listed = [...scopes].sort().join(',');
    listedScopes.set(scopes, listed);
  }
  return listed;
}

/** The `x-platform-signature` of a forwarded request: one `v1,<base64>` per signing key. */
export function contextSignature(keys: KeyObject[], context: GatewayContext): string {
  const signed = [
    context.requestId,
    context.timestamp,
    context.method,
    context.target,
    context.projectId,
    context.keyId,
    scopesListed(context.scopes),
  ].join('.');
  return keys.map((key) => `v1,${createHmac('sha256', key).update(signed).digest('base64')}`).join(' ');
}

/** The headers sent upstream: the client's, filtered, and the signed context. */
export function upstreamHeaders(
  received: IncomingHttpHeaders,
  context: GatewayContext,
  keys: KeyObject[],
): Record<string, string | string[]> {
  const connectionListed = namedInConnection(received.connection);
  const headers: Record<string, string | string[]> = {};
  for (const name in received) {
    const value = received[name];
    if (value === undefined || HOP_BY_HOP.has(name) || NOT_UPSTREAM.has(name) || connectionListed.has(name))
      continue;
    if (name.startsWith('x-platform-')) continue;
    headers[name] = value;
  }
  headers['x-platform-project-id'] = context.projectId;
  headers['x-platform-key-id'] = context.keyId;
  headers['x-platform-scopes'] = scopesListed(context.scopes);
  headers['x-platform-request-id'] = context.requestId;
  headers['x-platform-timestamp'] = String(context.timestamp);
  headers['x-platform-signature'] = contextSignature(keys, context);
  return headers;
}

/**
 * The headers a `Connection` header names: hop-by-hop for this connection only (RFC 9110 §7.6.1), so
 * never passed on, in either direction.
 */
function namedInConnection(connection: string | string[] | undefined): ReadonlySet<string> {
  // Most requests and answers carry none, or only `keep-alive` or `close`: hop-by-hop already.
  if (connection === undefined || HOP_BY_HOP_ONLY.test(String(connection))) return NONE;
  const listed = Array.isArray(connection) ? connection.join(',') : connection;
  return new Set(listed.split(',').map((name) => name.trim().toLowerCase()));
}
const NONE: ReadonlySet<string> = new Set();
const HOP_BY_HOP_ONLY = /^\s*(keep-alive|close)\s*$/i;

/** The upstream's answer headers that go back to the client. */
export function answerHeaders(received: Record<string, string | string[] | undefined>) {
  const connectionListed = namedInConnection(received.connection);
  const headers: Record<string, string | string[]> = {};
  for (const name in received) {
    const value = received[name];
    if (value === undefined || HOP_BY_HOP.has(name) || NOT_BACK.has(name) || connectionListed.has(name))
      continue;
    headers[name] = value;
  }
  return headers;
}
