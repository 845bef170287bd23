// Endpoints a test sets up through the API: one unordered and one ordered as a whole, both taking shop.*.
import type { TestService } from './app.ts';

/** [unordered, ordered] endpoint ids of the key's project; idempotency keys `${prefix}-0…2`. */
export async function plainAndOrdered(service: TestService, key: string, prefix: string) {
  const endpoint = async (idempotencyKey: string) =>
    (
      await service.request('POST', '/core/v1/webhook-endpoints', {
        key,
        body: { url: 'https://93.184.216.34/hook', eventTypes: ['shop.*'] },
        headers: { 'idempotency-key': idempotencyKey },
      })
    ).body.id as string;
  const [plain, ordered] = [await endpoint(`${prefix}-0`), await endpoint(`${prefix}-1`)];
  await service.request('PATCH', `/core/v1/webhook-endpoints/${ordered}`, {
    key,
    body: { ordering: 'endpoint' },
    headers: { 'idempotency-key': `${prefix}-2`, 'content-type': 'application/merge-patch+json' },
  });
  return [plain, ordered] as const;
}
