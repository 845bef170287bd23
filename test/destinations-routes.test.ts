// What a destination's routes answer (contract 0.4), on a service that keeps the address policy as a
// deployment does (no private targets): every type listed under /core/v1/destinations, a webhook endpoint's
// routes finding only webhooks, a target taking only its type's fields, and a broker's host refused when it
// is loopback, private or unresolvable: at creation, and again before the worker's connection when its
// name has moved inward since (no socket opened).
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, test } from 'node:test';
import type { Resolver } from '../src/webhooks/address-policy.ts';
import { expectProblem, startService, type Tenant } from './helpers/app.ts';
import { eventually } from './helpers/receiver.ts';

/** Names a test moves inward after creating a destination on them. */
const movedInward = new Set<string>();
const resolve: Resolver = async (host) => {
  if (movedInward.has(host)) return ['127.0.0.1'];
  if (host === 'inward.example.com') return ['10.1.2.3'];
  if (host.endsWith('.example.com')) return ['93.184.216.34'];
  throw new Error('ENOTFOUND');
};
const service = await startService({
  resolve,
  env: { PLATFORM_WORKER_POLL_MS: '100', PLATFORM_RETRY_SCHEDULE: '0,0' },
  worker: true,
});
let n = 0;
const call = (who: Tenant, method: string, path: string, body?: unknown) =>
  service.request(method, path, { key: who.key, body, headers: { 'idempotency-key': `dr-${++n}` } });

interface Created {
  id: string;
  type: string;
  target: Record<string, unknown>;
}

async function destination(who: Tenant, type: string, target: Record<string, unknown>) {
  const response = await call(who, 'POST', '/core/v1/destinations', { type, target, eventTypes: ['pay.*'] });
  assert.equal(response.status, 201, response.text);
  return response.body as Created;
}

describe('destinations: routes and addresses', () => {
  test('the routes: every type listed under destinations, a webhook endpoint’s routes find only webhooks', async () => {
    const tenant = await service.tenant();
    const webhook = await destination(tenant, 'webhook', { url: 'https://hooks.example.com/d' });
    const polling = await destination(tenant, 'polling', {});
    assert.deepEqual(webhook.target, { url: 'https://hooks.example.com/d' });
    const all = (await call(tenant, 'GET', '/core/v1/destinations')).body.data as Created[];
    assert.deepEqual(
      all.map((d) => d.type),
      ['webhook', 'polling'],
    );
    const hooks = (await call(tenant, 'GET', '/core/v1/webhook-endpoints')).body.data as {
      id: string;
      url: string;
    }[];
    assert.deepEqual(
      hooks.map((e) => e.id),
      [webhook.id],
    );
    assert.equal(hooks[0]?.url, 'https://hooks.example.com/d');
    for (const path of ['', '/deliveries', '/stats']) {
      expectProblem(
        await call(tenant, 'GET', `/core/v1/webhook-endpoints/${polling.id}${path}`),
        404,
        'NOT_FOUND',
      );
    }
    expectProblem(
      await call(tenant, 'POST', `/core/v1/webhook-endpoints/${polling.id}/pause`),
      404,
      'NOT_FOUND',
    );
    const paused = await call(tenant, 'POST', `/core/v1/destinations/${polling.id}/pause`);
    assert.equal(paused.status, 200, paused.text);
    assert.equal(paused.body.paused, true);
    assert.equal(paused.body.type, 'polling');
    expectProblem(
      await call(tenant, 'GET', `/core/v1/destinations/${webhook.id}/messages`),
      404,
      'NOT_FOUND',
    );
    // What a target takes is its type's, whatever its address.
    expectProblem(
      await call(tenant, 'POST', '/core/v1/destinations', {
        type: 'redis',
        target: { url: 'redis://cache.example.com:6379', exchange: 'x' },
        eventTypes: ['*'],
      }),
      400,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await call(tenant, 'POST', '/core/v1/destinations', {
        type: 'nats',
        target: { url: 'nats://nats.example.com:4222' },
        eventTypes: ['*'],
      }),
      400,
      'VALIDATION_FAILED',
    );
    const deleted = await call(tenant, 'DELETE', `/core/v1/destinations/${polling.id}`);
    assert.equal(deleted.status, 204);
  });

  test('a broker’s host under the address policy: refused at creation, and before each connection', async () => {
    const tenant = await service.tenant();
    for (const [type, target, reason] of [
      ['rabbitmq', { url: 'amqp://guest:guest@127.0.0.1:5672', exchange: 'x' }, /loopback/],
      ['redis', { url: 'redis://[::1]:6379', stream: 's' }, /not a global unicast/],
      ['nats', { url: 'nats://10.0.0.7:4222', subject: 's' }, /private/],
      ['nats', { url: 'nats://inward.example.com:4222', subject: 's' }, /resolves to 10\.1\.2\.3/],
      ['redis', { url: 'redis://nowhere.invalid:6379', stream: 's' }, /resolve/],
    ] as const) {
      const response = await call(tenant, 'POST', '/core/v1/destinations', {
        type,
        target,
        eventTypes: ['*'],
      });
      expectProblem(response, 400, 'WEBHOOK_URL_NOT_ALLOWED');
      assert.equal(response.body.errors[0].pointer, '/target/url', response.text);
      assert.match(response.body.detail, reason, `${type} ${target.url}`);
    }
    // A name that was public when the destination was made, and resolves to loopback since: the worker
    // checks it again before connecting, and the broker listening there is never dialled.
    const dialled: net.Socket[] = [];
    const listener = net.createServer((socket) => dialled.push(socket.destroy()));
    await new Promise<void>((done) => listener.listen(0, '127.0.0.1', done));
    after(() => listener.close());
    const { port } = listener.address() as net.AddressInfo;
    const host = `moved-${process.pid}.example.com`;
    const created = await destination(tenant, 'redis', { url: `redis://${host}:${port}`, stream: 's' });
    movedInward.add(host);
    const published = await call(tenant, 'POST', '/core/v1/events', {
      type: 'pay.payment.succeeded',
      data: { amount: 1 },
    });
    assert.equal(published.status, 202, published.text);
    const attempts = await eventually(async () => {
      const log = await call(tenant, 'GET', `/core/v1/destinations/${created.id}/deliveries`);
      const first = log.body.data[0]?.attempts as { succeeded: boolean; error: string | null }[] | undefined;
      return first?.length ? first : undefined;
    });
    assert.equal(attempts[0]?.succeeded, false);
    assert.match(attempts[0]?.error ?? '', /refused: .* resolves to .*loopback/);
    assert.equal(dialled.length, 0, 'no socket opened to a refused address');
  });
});
