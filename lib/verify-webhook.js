// Verifying platform-core webhooks in a receiver (Standard Webhooks, with several secrets).
// Plain JavaScript so that it runs from node_modules, where Node does not strip TypeScript types.
import { createHmac, timingSafeEqual } from 'node:crypto';

export class WebhookVerificationError extends Error {
  name = 'WebhookVerificationError';
}

const PREFIX = 'whsec_';

/**
 * Verifies a delivery from its raw body, its headers and every secret the receiver holds (the active one
 * and, during a rotation, the previous one). Returns the parsed event; throws WebhookVerificationError.
 *
 * @param {string | Buffer} rawBody the body exactly as received, before any JSON parsing
 * @param {Record<string, string | string[] | undefined> | Headers} headers the request headers
 * @param {(string | Buffer)[]} secrets `whsec_…` secrets (or their decoded key bytes)
 * @param {{ toleranceSeconds?: number, now?: number }} [options] timestamp tolerance (default 300 s)
 */
export function verifyWebhook(rawBody, headers, secrets, options = {}) {
  const header = (name) => {
    const value = typeof headers.get === 'function' ? headers.get(name) : headers[name];
    return Array.isArray(value) ? value[0] : (value ?? undefined);
  };
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signatures = header('webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not a number');
  const tolerance = options.toleranceSeconds ?? 300;
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(now - Number(timestamp)) > tolerance)
    throw new WebhookVerificationError('webhook-timestamp is outside the tolerance');
  if (!Array.isArray(secrets) || secrets.length === 0)
    throw new WebhookVerificationError('no secret to verify with');

  const body = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
  const content = `${id}.${timestamp}.${body}`;
  const received = signatures
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  for (const secret of secrets) {
    const key =
      typeof secret === 'string'
        ? Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64')
        : secret;
    const expected = createHmac('sha256', key).update(content).digest();
    if (
      received.some(
        (signature) => signature.length === expected.length && timingSafeEqual(signature, expected),
      )
    ) {
      return JSON.parse(body);
    }
  }
  throw new WebhookVerificationError('no signature matches any of the secrets');
}
