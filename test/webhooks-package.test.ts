// The receiver package (packages/webhooks, as built by npm ci) on real deliveries: through a rotation
// with one secret or both, and in each framework's example (ESM and CommonJS) as a user would run it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { verifyWebhook, WebhookVerificationError } from '@platform-core/webhooks';
import { freePort, spawnNode } from '../support/process.ts';
import { startService, type Tenant } from './helpers/app.ts';
import {
  NATS_URL,
  natsStream,
  RABBITMQ_URL,
  REDIS_URL,
  rabbitmqQueue,
  redisStream,
} from './helpers/brokers.ts';
import { startReceiver } from './helpers/receiver.ts';

const service = await startService({
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100' },
  worker: true,
});
let n = 0;
const write = (who: Tenant, path: string, body?: unknown) =>
  service.request('POST', path, { key: who.key, headers: { 'idempotency-key': `w-${++n}` }, body });
const publish = async (who: Tenant) =>
  (await write(who, '/core/v1/events', { type: 'pay.payment.succeeded', data: { n } })).body
    .eventId as string;

describe('@platform-core/webhooks', () => {
  test('through a rotation: either secret verifies while both sign; after retiring, only the new one', async () => {
    const tenant = await service.tenant();
    const receiver = await startReceiver();
    const created = await write(tenant, '/core/v1/webhook-endpoints', {
      url: receiver.url,
      eventTypes: ['*'],
    });
    const { id, secret: first } = created.body as { id: string; secret: string };
    const rotated = (await write(tenant, `/core/v1/webhook-endpoints/${id}/rotate-secret`)).body
      .secret as string;
    const during = await publish(tenant);
    await receiver.waitFor(1);
    const { body, headers } = receiver.received[0]!;
    for (const secrets of [[first], [rotated], [rotated, first]]) {
      const event = await verifyWebhook(body, headers, secrets);
      assert.deepEqual([event.id, event.type], [during, 'pay.payment.succeeded']);
    }
    await assert.rejects(
      verifyWebhook(body, headers, [`whsec_${randomBytes(24).toString('base64')}`]),
      WebhookVerificationError,
    );
    await assert.rejects(
      verifyWebhook(body, headers, [first], { now: new Date(Date.now() + 600_000) }),
      /outside the tolerance/,
    );
    const asHeaders = new Headers(headers as Record<string, string>);
    assert.equal((await verifyWebhook(new TextEncoder().encode(body), asHeaders, first)).id, during);

    await write(tenant, `/core/v1/webhook-endpoints/${id}/retire-previous-secret`);
    await publish(tenant);
    await receiver.waitFor(2);
    const later = receiver.received[1]!;
    await assert.rejects(verifyWebhook(later.body, later.headers, [first]), /no signature matches/);
    assert.ok(await verifyWebhook(later.body, later.headers, [first, rotated]));
  });

  for (const example of ['node-http.mjs', 'node-http.cjs', 'express.cjs', 'fastify.mjs', 'hono.mjs']) {
    test(`the ${example} example verifies real deliveries and refuses a forged one`, async () => {
      const tenant = await service.tenant();
      const port = await freePort();
      const url = `http://127.0.0.1:${port}/webhooks`;
      const endpoint = await write(tenant, '/core/v1/webhook-endpoints', { url, eventTypes: ['*'] });
      const receiver = spawnNode(
        new URL(`../packages/webhooks/examples/${example}`, import.meta.url).pathname,
        [],
        { PATH: process.env.PATH, WEBHOOK_SECRETS: endpoint.body.secret, PORT: String(port) },
      );
      after(() => receiver.stop());
      await receiver.waitFor(/"listening":\d+/);
      const eventId = await publish(tenant);
      await receiver.waitFor(new RegExp(`"verified":"pay.payment.succeeded","id":"${eventId}"`), 20_000);
      const forged = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': eventId,
          'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
          'webhook-signature': 'v1,c2lnbmVkIGJ5IG5vYm9keQ==',
        },
        body: '{"id":"x","type":"pay.payment.succeeded","timestamp":"2026-01-01T00:00:00Z","data":{}}',
      });
      assert.equal(forged.status, 400);
      await receiver.waitFor(/"refused":"no signature matches any of the secrets"/);
    });
  }

  /** Each broker's consumer example: the destination it reads, and the environment it runs with. */
  const CONSUMERS: Record<
    string,
    () => Promise<{ type: string; target: object; env: Record<string, string> }>
  > = {
    'rabbitmq.mjs': async () => {
      const mq = await rabbitmqQueue();
      const target = { url: RABBITMQ_URL, exchange: mq.exchange, routingKey: 'pay' };
      return { type: 'rabbitmq', target, env: { AMQP_URL: RABBITMQ_URL, QUEUE: mq.queue } };
    },
    'redis.mjs': async () => {
      const redis = await redisStream();
      const env = { REDIS_URL, STREAM: redis.stream };
      return { type: 'redis', target: { url: REDIS_URL, stream: redis.stream }, env };
    },
    'nats.mjs': async () => {
      const nats = await natsStream();
      const env = { NATS_SERVERS: new URL(NATS_URL).host, STREAM: nats.subject.replace(/\.pay$/, '') };
      return { type: 'nats', target: { url: NATS_URL, subject: nats.subject }, env };
    },
    'polling.mjs': async () => ({ type: 'polling', target: {}, env: {} }),
  };

  for (const [example, setUp] of Object.entries(CONSUMERS)) {
    test(`the ${example} consumer verifies real messages`, async () => {
      const tenant = await service.tenant();
      const { type, target, env } = await setUp();
      const created = await write(tenant, '/core/v1/destinations', { type, target, eventTypes: ['*'] });
      assert.equal(created.status, 201, created.text);
      const consumer = spawnNode(
        new URL(`../packages/webhooks/examples/${example}`, import.meta.url).pathname,
        [],
        {
          PATH: process.env.PATH,
          WEBHOOK_SECRETS: created.body.secret,
          PLATFORM_URL: service.baseUrl,
          PLATFORM_API_KEY: tenant.key,
          DESTINATION_ID: created.body.id,
          ...env,
        },
      );
      after(() => consumer.stop('SIGKILL'));
      await consumer.waitFor(/"consuming":/);
      const eventId = await publish(tenant);
      await consumer.waitFor(new RegExp(`"verified":"pay.payment.succeeded","id":"${eventId}"`), 20_000);
      assert.doesNotMatch(consumer.output(), /refused/);
    });
  }
});
