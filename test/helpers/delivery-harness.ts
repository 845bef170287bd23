// The delivery tests' service (a worker beside the API, private targets allowed, quick retries and a short
// time-out) and what they do through it: make an endpoint, publish, and wait for a delivery's state.
import assert from 'node:assert/strict';
import { startService, type Tenant } from './app.ts';
import { eventually } from './receiver.ts';

/** The service, and its calls as the delivery tests make them; `prefix` keeps each file's keys apart. */
export async function deliveryHarness(prefix: string) {
  const service = await startService({
    env: {
      PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
      PLATFORM_RETRY_SCHEDULE: '1,1',
      PLATFORM_DELIVERY_TIMEOUT_MS: '1000',
      PLATFORM_WORKER_POLL_MS: '100',
    },
    worker: true,
  });
  let n = 0;
  const idem = () => ({ 'idempotency-key': `${prefix}-${++n}` });

  async function endpoint(who: Tenant, url: string, eventTypes = ['*']) {
    const response = await service.request('POST', '/core/v1/webhook-endpoints', {
      key: who.key,
      body: { url, eventTypes },
      headers: idem(),
    });
    assert.equal(response.status, 201, response.text);
    return response.body as { id: string; secret: string };
  }
  const publish = (
    who: Tenant,
    type: string,
    data: Record<string, unknown> = { n: ++n },
    subjects?: unknown[],
  ) =>
    service.request('POST', '/core/v1/events', {
      key: who.key,
      body: { type, data, subjects },
      headers: idem(),
    });
  const post = (who: Tenant, path: string) =>
    service.request('POST', path, { key: who.key, headers: idem() });
  const get = (who: Tenant, path: string) => service.request('GET', path, { key: who.key });
  const deliveryOf = async (who: Tenant, eventId: string) =>
    (await get(who, `/core/v1/events/${eventId}`)).body.deliveries[0];
  const settled = (who: Tenant, eventId: string, state: string) =>
    eventually(
      async () => {
        const delivery = await deliveryOf(who, eventId);
        return delivery?.state === state && delivery;
      },
      20_000,
      `delivery ${state}`,
    );
  return { service, idem, endpoint, publish, post, get, deliveryOf, settled };
}
