// The SDK's side of the gateway and of breakers, against a real service: a request the gateway forwarded
// is verified with the capability's signing secrets (both during a rotation), and anything changed, stale
// or signed with another secret is refused; a reporter sends an opossum-shaped breaker's state, and a
// started one sends a change as soon as it sees it.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import {
  Capability,
  GatewayVerificationError,
  verifyGatewayRequest,
} from '../packages/capability/src/index.ts';
import { startService } from './helpers/app.ts';
import { eventually } from './helpers/receiver.ts';

const seen: IncomingMessage[] = [];
const upstream = createServer((request, response) => {
  seen.push(request);
  response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
after(() => upstream.close());

const service = await startService();
const operator = await service.operator();
const manifest = {
  description: 'Verified upstream',
  scopes: [{ name: 'sdkgw:read', description: 'Read' }],
  metrics: [],
  eventTypes: [],
  providers: [{ name: 'mailer' }],
  erasure: null,
  gateway: { routes: [{ method: 'GET', path: '/v1/things/{id}', scope: 'sdkgw:read', idempotent: false }] },
};
const capability = await service.capability('sdkgw', {
  upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/api`,
  manifest,
});
const tenant = await service.tenant(['sdkgw:read']);

/** One request through the gateway; what the upstream received. */
async function forwarded() {
  const answer = await service.request('GET', '/sdkgw/v1/things/42?x=1', { key: tenant.key });
  assert.equal(answer.status, 200, answer.text);
  const request = seen.at(-1) as IncomingMessage;
  return { method: request.method ?? '', url: request.url ?? '', headers: request.headers };
}

describe('@platform-core/capability and the gateway', () => {
  test('a forwarded request verifies: the caller’s project, key and scopes', async () => {
    const request = await forwarded();
    assert.equal(request.url, '/api/v1/things/42?x=1');
    const caller = await verifyGatewayRequest(request, capability.signingSecret);
    assert.equal(caller.projectId, tenant.projectId);
    assert.equal(caller.keyId, tenant.keyId);
    assert.deepEqual(caller.scopes, ['sdkgw:read']);
    assert.ok(Math.abs(caller.timestamp - Date.now() / 1000) < 10);
  });

  test('refused: another secret, a changed path, project or scopes, a stale timestamp, no headers', async () => {
    const request = await forwarded();
    const refused = (changed: typeof request, options?: { now?: Date }) =>
      assert.rejects(
        verifyGatewayRequest(changed, capability.signingSecret, options),
        GatewayVerificationError,
      );
    await assert.rejects(
      verifyGatewayRequest(request, `whsec_${Buffer.alloc(32, 7).toString('base64')}`),
      GatewayVerificationError,
    );
    await refused({ ...request, url: '/api/v1/things/43?x=1' });
    await refused({ ...request, method: 'DELETE' });
    await refused({
      ...request,
      headers: { ...request.headers, 'x-platform-project-id': crypto.randomUUID() },
    });
    await refused({
      ...request,
      headers: { ...request.headers, 'x-platform-scopes': 'sdkgw:read,sdkgw:admin' },
    });
    await refused(request, { now: new Date(Date.now() + 301_000) });
    await refused({ ...request, headers: {} });
  });

  test('during a rotation both secrets sign: either verifies', async () => {
    const rotated = await service.request('POST', '/admin/v1/capabilities/sdkgw/rotate-signing-secret', {
      key: operator.key,
      headers: { 'idempotency-key': 'rotate-sdkgw' },
    });
    assert.equal(rotated.status, 200, rotated.text);
    await eventually(async () => {
      const request = await forwarded();
      return String(request.headers['x-platform-signature']).split(' ').length === 2;
    }, 8000);
    const request = await forwarded();
    await verifyGatewayRequest(request, capability.signingSecret);
    await verifyGatewayRequest(request, rotated.body.signingSecret);
  });

  test('a breaker reporter sends an opossum-shaped breaker’s state', async () => {
    const breaker = { opened: true, halfOpen: false };
    const platform = new Capability({ apiKey: capability.key, baseUrl: service.baseUrl });
    const reporter = platform.breakerReporter({ instance: 'sdk-1', breakers: { mailer: breaker } });
    await reporter.report();
    const read = async () =>
      (await service.request('GET', '/admin/v1/capabilities/sdkgw', { key: operator.key })).body
        .breakerReports;
    assert.deepEqual(
      (await read()).map((r: { state: string }) => r.state),
      ['open'],
    );
    breaker.opened = false;
    breaker.halfOpen = true;
    await reporter.report();
    assert.deepEqual(
      (await read()).map((r: { state: string }) => r.state),
      ['half_open'],
    );
  });

  test('a started reporter sends a change when it sees it, not at its next interval', async (t) => {
    const breaker = { opened: false, halfOpen: false };
    const platform = new Capability({ apiKey: capability.key, baseUrl: service.baseUrl });
    const errors: unknown[] = [];
    const reporter = platform
      .breakerReporter({
        instance: 'sdk-2',
        breakers: { mailer: breaker },
        intervalMs: 600_000,
        watchMs: 50,
        onError: (error) => errors.push(error),
      })
      .start();
    t.after(() => reporter.stop());
    const stateOf = async () => {
      const { body } = await service.request('GET', '/admin/v1/capabilities/sdkgw', { key: operator.key });
      return body.breakerReports.find((r: { instance: string }) => r.instance === 'sdk-2')?.state;
    };
    await eventually(async () => (await stateOf()) === 'closed', 5000);
    breaker.opened = true;
    // The interval is ten minutes: only the watch can send it within the wait.
    await eventually(async () => (await stateOf()) === 'open', 5000);
    breaker.opened = false;
    breaker.halfOpen = true;
    await eventually(async () => (await stateOf()) === 'half_open', 5000);
    assert.deepEqual(errors, []);
  });
});
