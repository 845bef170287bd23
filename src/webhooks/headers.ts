// An endpoint's own headers (contract 0.4, "What a receiver can ask for"): at most 20, sent with every
// delivery. Their values may be credentials (a tenant key, a static token), so they are sealed at rest,
// bound to their endpoint as its secrets are, and answered as ***; only their names are kept in clear.

import { type Keyring, seal, unseal } from '../lib/crypto.ts';
import { PlatformError } from '../lib/errors.ts';
import { HOP_BY_HOP } from '../lib/hop-by-hop.ts';

export const MOST_HEADERS = 20;
export const MOST_METADATA = 20;

/** Besides the hop-by-hop ones, the headers the transport owns. */
const REFUSED = new Set([...HOP_BY_HOP, 'host', 'content-length', 'content-type']);

/** Why a header cannot be an endpoint's own, or undefined when it can. */
export function refusedHeader(name: string): string | undefined {
  if (REFUSED.has(name)) return `${name} is set by the platform or the connection, not by an endpoint`;
  if (name.startsWith('webhook-')) return 'webhook-* headers are the signature’s';
  return undefined;
}

/** A 400 naming each header refused, with its pointer. */
export function requireAllowedHeaders(headers: Record<string, unknown>): void {
  const errors = Object.keys(headers).flatMap((name) => {
    const detail = refusedHeader(name);
    return detail
      ? [{ pointer: `/headers/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`, detail }]
      : [];
  });
  if (errors.length > 0) {
    throw new PlatformError('VALIDATION_FAILED', errors[0]?.detail, { errors });
  }
}

const contextOf = (endpointId: string) => `webhook-headers:${endpointId}`;

/** The headers sealed for their endpoint; null for none. */
export function sealHeaders(keyring: Keyring, endpointId: string, headers: Record<string, string>) {
  if (Object.keys(headers).length === 0) return null;
  return seal(keyring, Buffer.from(JSON.stringify(headers)), contextOf(endpointId));
}

export function openHeaders(
  keyring: Keyring,
  endpointId: string,
  sealed: Buffer | null,
): Record<string, string> {
  if (sealed === null) return {};
  return JSON.parse(unseal(keyring, sealed, contextOf(endpointId)).toString('utf8')) as Record<
    string,
    string
  >;
}

/** A merge patch of string values (RFC 7396): a value sets, null removes; at most `most` remain. */
export function merged(
  field: 'headers' | 'metadata',
  before: Record<string, string>,
  change: Record<string, string | null>,
  most: number,
): Record<string, string> {
  const after = { ...before };
  for (const [key, value] of Object.entries(change)) {
    if (value === null) delete after[key];
    else after[key] = value;
  }
  if (Object.keys(after).length > most) {
    const detail = `at most ${most} ${field} remain after the change`;
    throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer: `/${field}`, detail }] });
  }
  return after;
}

/** The names of the headers, each answered as ***. */
export const maskedHeaders = (names: string[]): Record<string, '***'> =>
  Object.fromEntries(names.map((name) => [name, '***' as const]));
