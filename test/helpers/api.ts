// A tenant's calls to a test service, for the tests of delivery control: every write with its own
// idempotency key, answers checked where the test is not about them.
import assert from 'node:assert/strict';
import type { Tenant, TestService } from './app.ts';

let n = 0;

export function client(service: TestService, tenant: Tenant) {
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    service.request(method, path, {
      key: tenant.key,
      body,
      headers: method === 'GET' ? headers : { 'idempotency-key': `api-${process.pid}-${++n}`, ...headers },
    });
  const api = {
    call,
    get: (path: string) => call('GET', path),
    post: (path: string, body?: unknown) => call('POST', path, body),
    /** A new endpoint (201 asserted), with any fields of a PATCH applied after. */
    async endpoint(url: string, eventTypes: string[] = ['*'], patch?: Record<string, unknown>) {
      const created = await call('POST', '/core/v1/webhook-endpoints', { url, eventTypes });
      assert.equal(created.status, 201, created.text);
      if (patch) {
        const patched = await call('PATCH', `/core/v1/webhook-endpoints/${created.body.id}`, patch);
        assert.equal(patched.status, 200, patched.text);
      }
      return created.body as { id: string; secret: string; unknownEventTypes: string[] };
    },
    /** Publishes an event (202 asserted); its id. */
    async publish(type: string, data: object = {}, orderingKey?: string) {
      const response = await call('POST', '/core/v1/events', { type, data, orderingKey });
      assert.equal(response.status, 202, response.text);
      return response.body.eventId as string;
    },
    /** The endpoint's deliveries, newest first (one page of 100). */
    async history(endpointId: string) {
      const response = await call('GET', `/core/v1/webhook-endpoints/${endpointId}/deliveries?limit=100`);
      assert.equal(response.status, 200, response.text);
      return response.body.data as {
        id: string;
        eventId: string;
        state: string;
        waitReason: string | null;
      }[];
    },
  };
  return api;
}
