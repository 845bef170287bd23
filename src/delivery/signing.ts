// Standard Webhooks signing: HMAC-SHA256 over "id.timestamp.body" with each signing secret (active first,
// then the previous one during a rotation), as `v1,<base64>` entries separated by spaces.
import { createHmac } from 'node:crypto';

export function signatureHeader(secrets: Buffer[], id: string, timestamp: number, body: string): string {
  return secrets
    .map(
      (secret) => `v1,${createHmac('sha256', secret).update(`${id}.${timestamp}.${body}`).digest('base64')}`,
    )
    .join(' ');
}
