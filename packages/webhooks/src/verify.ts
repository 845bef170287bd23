// Verifying a delivery (Standard Webhooks: HMAC-SHA256 over `id.timestamp.body`) with Web Crypto only, so
// the same code runs in Node 20+, Deno, Bun, browsers and edge runtimes. Several secrets are tried, so a
// receiver keeps accepting deliveries through a rotation (the service signs with both secrets meanwhile).
import type { PlatformEvent } from './events.ts';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

/** Request headers as a runtime gives them: a Fetch `Headers`, or Node's record (Express, Fastify, http). */
export type HeadersLike =
  | { get(name: string): string | null }
  | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far the signed timestamp may be from now, in seconds (default 300): older is a replay. */
  toleranceSeconds?: number;
  /** The time to check against (default: now); for tests. */
  now?: Date;
}

const SECRET_PREFIX = 'whsec_';
const encoder = new TextEncoder();

/**
 * Checks a delivery's signature against each of the receiver's secrets (the active one and, during a
 * rotation, the previous one) and its timestamp against the tolerance; returns the parsed event.
 * `rawBody` must be the body exactly as received, before any JSON parsing.
 * Throws WebhookVerificationError when anything does not hold.
 */
export async function verifyWebhook<Event = PlatformEvent>(
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: HeadersLike,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): Promise<Event> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not a number');
  const tolerance = options.toleranceSeconds ?? 300;
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(timestamp)) > tolerance)
    throw new WebhookVerificationError('webhook-timestamp is outside the tolerance');
  const keys = typeof secrets === 'string' ? [secrets] : secrets;
  if (keys.length === 0) throw new WebhookVerificationError('no secret to verify with');

  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  const signed = encoder.encode(`${id}.${timestamp}.${body}`);
  const received = signatures
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => fromBase64(entry.slice(3)))
    .filter((bytes): bytes is Uint8Array<ArrayBuffer> => bytes !== undefined);
  for (const secret of keys) {
    const key = await hmacKey(secret);
    for (const signature of received) {
      // Web Crypto's verify compares in constant time.
      if (await crypto.subtle.verify('HMAC', key, signature, signed)) return parse<Event>(body);
    }
  }
  throw new WebhookVerificationError('no signature matches any of the secrets');
}

function header(headers: HeadersLike, name: string): string | undefined {
  const value =
    typeof headers.get === 'function' ? headers.get(name) : (headers as Record<string, unknown>)[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first !== '' ? first : undefined;
}

async function hmacKey(secret: string) {
  const bytes = fromBase64(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  if (!bytes || bytes.length === 0) throw new WebhookVerificationError('a secret is not whsec_ and base64');
  return crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function parse<Event>(body: string): Event {
  try {
    return JSON.parse(body) as Event;
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
}
