// The gateway's signed context as an upstream checks it, computed here from the capability's secret (an
// independent HMAC, not the service's code).
import { createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The `v1,<base64>` signature a forwarded request's context headers must carry under `secret`. */
export function expectedSignature(
  secret: string,
  headers: IncomingMessage['headers'],
  method: string,
  target: string,
) {
  const signed = [
    headers['x-platform-request-id'],
    headers['x-platform-timestamp'],
    method,
    target,
    headers['x-platform-project-id'],
    headers['x-platform-key-id'],
    headers['x-platform-scopes'],
  ].join('.');
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
}

/** Whether a forwarded request carries, among its signatures, one made with `secret`. */
export const signedWith = (
  headers: IncomingMessage['headers'],
  secret: string,
  method: string,
  target: string,
) =>
  String(headers['x-platform-signature'])
    .split(' ')
    .includes(expectedSignature(secret, headers, method, target));
