// Standard Webhooks signing: HMAC-SHA256 over "id.timestamp.body" with each signing secret (active first,
// then the previous one during a rotation), as `v1,<base64>` entries separated by spaces. Deliveries,
// erasure requests to capabilities and the dev receiver sign with it.
import { createHmac, type KeyObject } from 'node:crypto';

export function signatureHeader(
  secrets: KeyObject[],
  id: string,
  timestamp: number,
  body: string | Buffer,
): string {
  // "id.timestamp." and the body fed one after the other: no copy of the body per signature.
  const prefix = `${id}.${timestamp}.`;
  return secrets
    .map((secret) => `v1,${createHmac('sha256', secret).update(prefix).update(body).digest('base64')}`)
    .join(' ');
}
