// Deliveries to real HTTP receivers on loopback, checked by the reference Standard Webhooks verifier.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { verifyWebhook } from '@platform-core/webhooks';
import { Webhook } from 'standardwebhooks';
import { queueCounts } from '../src/delivery-store/stats.ts';
import { expectProblem } from './helpers/app.ts';
import { deliveryHarness } from './helpers/delivery-harness.ts';
import { answerWith, eventually, startReceiver } from './helpers/receiver.ts';
import { countOf } from './helpers/usage.ts';

const { service, idem, endpoint, publish, post, get, deliveryOf, settled } = await deliveryHarness('d');

describe('webhook deliveries', () => {
  test('signed per Standard Webhooks: the reference verifier and verifyWebhook accept the active secret', async () => {
    const tenant = await service.tenant();
    const receiver = await startReceiver();
    const { secret } = await endpoint(tenant, receiver.url);
    const published = await publish(tenant, 'pay.payment.succeeded', { amount: 4200, note: 'héllo ✓' });
    assert.equal(published.status, 202, published.text);
    assert.equal(published.body.deliveries, 1);
    await receiver.waitFor(1);
    const got = receiver.received[0]!;
    const headers = got.headers as Record<string, string>;
    assert.equal(headers['webhook-id'], published.body.eventId);
    assert.equal(headers['content-type'], 'application/json');
    assert.match(headers['user-agent'] ?? '', /^platform-core\/\d+\.\d+\.\d+$/);
    assert.ok(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000) < 30);
    const event = new Webhook(secret).verify(got.body, headers) as Record<string, unknown>;
    assert.deepEqual(event.data, { amount: 4200, note: 'héllo ✓' });
    assert.equal(event.id, published.body.eventId);
    assert.equal(event.type, 'pay.payment.succeeded');
    assert.ok(!Number.isNaN(Date.parse(event.timestamp as string)));
    assert.deepEqual(await verifyWebhook(got.body, headers, [secret]), event);
    await assert.rejects(
      verifyWebhook(got.body.replace('4200', '4201'), headers, [secret]),
      /no signature matches/,
    );
    await settled(tenant, published.body.eventId, 'delivered');
  });

  test('during a rotation both secrets sign; after retire only the active one', async () => {
    const tenant = await service.tenant();
    const receiver = await startReceiver();
    const { id, secret: first } = await endpoint(tenant, receiver.url);
    // A delivery before the rotation: the worker keeps signing keys, and must notice each change.
    await publish(tenant, 'pay.payment.succeeded');
    await receiver.waitFor(1);
    const before = receiver.received[0]!;
    assert.equal((before.headers as Record<string, string>)['webhook-signature']?.split(' ').length, 1);
    new Webhook(first).verify(before.body, before.headers as Record<string, string>);

    const rotated = (await post(tenant, `/core/v1/webhook-endpoints/${id}/rotate-secret`)).body
      .secret as string;
    await publish(tenant, 'pay.payment.succeeded');
    await receiver.waitFor(2);
    const during = receiver.received[1]!;
    const headers = during.headers as Record<string, string>;
    assert.equal(headers['webhook-signature']?.split(' ').length, 2);
    new Webhook(rotated).verify(during.body, headers);
    new Webhook(first).verify(during.body, headers); // a receiver still on the previous secret keeps working
    assert.ok(await verifyWebhook(during.body, headers, [first]));

    await post(tenant, `/core/v1/webhook-endpoints/${id}/retire-previous-secret`);
    await publish(tenant, 'pay.payment.succeeded');
    await receiver.waitFor(3);
    const after = receiver.received[2]!;
    const afterHeaders = after.headers as Record<string, string>;
    assert.equal(afterHeaders['webhook-signature']?.split(' ').length, 1);
    new Webhook(rotated).verify(after.body, afterHeaders);
    assert.throws(() => new Webhook(first).verify(after.body, afterHeaders));
  });

  test('event-type filtering: only endpoints listing the type, or *', async () => {
    const tenant = await service.tenant();
    const [pay, all, billing] = [await startReceiver(), await startReceiver(), await startReceiver()];
    await endpoint(tenant, pay.url, ['pay.payment.succeeded']);
    await endpoint(tenant, all.url, ['*']);
    await endpoint(tenant, billing.url, ['billing.invoice.paid']);
    const published = await publish(tenant, 'pay.payment.succeeded');
    assert.equal(published.body.deliveries, 2);
    await pay.waitFor(1);
    await all.waitFor(1);
    await publish(tenant, 'ai.completion.done');
    await all.waitFor(2);
    assert.equal(billing.received.length, 0);
    assert.equal(pay.received.length, 1);
  });

  test('retries through a receiver that fails, then succeeds; every attempt recorded, newest first', async () => {
    const tenant = await service.tenant();
    const receiver = await startReceiver((_r, index, response) => {
      response.writeHead(index < 2 ? 500 : 204).end(index < 2 ? 'not yet' : '');
    });
    const { id } = await endpoint(tenant, receiver.url);
    const published = await publish(tenant, 'pay.payment.succeeded');
    const delivery = await settled(tenant, published.body.eventId, 'delivered');
    assert.equal(delivery.attemptCount, 3);
    assert.equal(
      new Set(receiver.received.map((r) => r.headers['webhook-id'])).size,
      1,
      'the same webhook-id on every retry',
    );
    const history = (await get(tenant, `/core/v1/webhook-endpoints/${id}/deliveries`)).body;
    const attempts = history.data[0].attempts;
    assert.deepEqual(
      attempts.map((a: { attempt: number; statusCode: number; succeeded: boolean }) => [
        a.attempt,
        a.statusCode,
        a.succeeded,
      ]),
      [
        [3, 204, true],
        [2, 500, false],
        [1, 500, false],
      ],
    );
    assert.equal(attempts[1].responseBody, 'not yet');
    assert.equal(attempts[1].error, 'HTTP 500');
    // Its outcome is read from its last attempt (its history row is not written by a success).
    const shown = history.data[0];
    assert.deepEqual(
      [shown.state, shown.attemptCount, shown.lastStatus, shown.lastError],
      ['delivered', 3, 204, null],
    );
    assert.equal(delivery.deliveredAt, shown.deliveredAt);
    assert.ok(Date.parse(shown.deliveredAt) >= Date.parse(attempts[0].startedAt));
    assert.ok(Date.parse(shown.deliveredAt) <= Date.now());
    await service.context.meter.flush();
    // Metered on the day of each attempt: summed over the days, as a run may cross midnight UTC between them.
    const usage = (await get(tenant, '/core/v1/usage')).body.data;
    assert.equal(countOf(usage, 'core', 'webhook_deliveries'), 3, 'every attempt is metered');
  });

  test('dead after the last attempt, and counted in health', async () => {
    const tenant = await service.tenant();
    // Health's counts are up to 10 s old: what they stood at comes from the database itself.
    const before = await queueCounts(service.db);
    const receiver = await startReceiver(answerWith(503, {}, 'down'));
    await endpoint(tenant, receiver.url);
    const published = await publish(tenant, 'pay.payment.succeeded');
    const dead = await settled(tenant, published.body.eventId, 'dead');
    assert.equal(dead.attemptCount, 3); // PLATFORM_RETRY_SCHEDULE=1,1: three attempts in all
    assert.equal(receiver.received.length, 3);
    const health = await eventually(async () => {
      const body = (await get(tenant, '/api/health')).body;
      return body.queueDead > before.dead && body;
    });
    assert.equal(health.queueDead, before.dead + 1);
    assert.equal(health.webhooksDead24h, before.dead24h + 1);
    assert.equal(health.queueFailed24h, before.failedAttempts24h + 3);
  });

  test('a time-out, a redirect and a 3xx are failures; a redirect is never followed', async () => {
    const tenant = await service.tenant();
    const slow = await startReceiver(async (_r, _i, response) => {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      response.writeHead(204).end();
    });
    const redirecting = await startReceiver((received, _i, response) => {
      if (received.headers['webhook-id']) response.writeHead(302, { location: '/elsewhere' }).end();
    });
    await endpoint(tenant, slow.url, ['pay.slow.thing']);
    await endpoint(tenant, redirecting.url, ['pay.moved.thing']);
    const slowEvent = (await publish(tenant, 'pay.slow.thing')).body.eventId;
    const movedEvent = (await publish(tenant, 'pay.moved.thing')).body.eventId;
    const timedOut = await eventually(async () => {
      const d = await deliveryOf(tenant, slowEvent);
      return d?.attemptCount >= 1 && d;
    });
    assert.equal(timedOut.lastError, 'timed out');
    const moved = await eventually(async () => {
      const d = await deliveryOf(tenant, movedEvent);
      return d?.attemptCount >= 1 && d;
    });
    assert.equal(moved.lastStatus, 302);
    assert.match(moved.lastError, /redirect \(302\) not followed/);
    assert.ok(
      redirecting.received.every((r) => r.headers['webhook-id']),
      'the Location was never requested',
    );
  });

  test('410 Gone disables the endpoint; retry-after on 429 is honoured; responses are kept to 4 KiB', async () => {
    const tenant = await service.tenant();
    const gone = await startReceiver(answerWith(410));
    const busy = await startReceiver(answerWith(429, { 'retry-after': '3' }, 'x'.repeat(10_000)));
    const goneEndpoint = await endpoint(tenant, gone.url, ['pay.gone.thing']);
    await endpoint(tenant, busy.url, ['pay.busy.thing']);
    const goneEvent = (await publish(tenant, 'pay.gone.thing')).body.eventId;
    assert.equal((await settled(tenant, goneEvent, 'dead')).lastStatus, 410);
    const listed = (await get(tenant, '/core/v1/webhook-endpoints')).body.data.find(
      (e: { id: string }) => e.id === goneEndpoint.id,
    );
    assert.equal(listed.active, false);
    assert.equal(
      (await publish(tenant, 'pay.gone.thing')).body.deliveries,
      0,
      'a disabled endpoint gets nothing new',
    );

    const busyEvent = (await publish(tenant, 'pay.busy.thing')).body.eventId;
    const waiting = await eventually(async () => {
      const d = await deliveryOf(tenant, busyEvent);
      return d?.attemptCount === 1 && d;
    });
    const { rows } = await service.db.query(
      `select extract(epoch from q.next_attempt_at - a.started_at) as gap, length(a.response_body) as captured
         from delivery_queue q join delivery_attempts a on a.project_id = q.project_id and a.delivery_id = q.delivery_id
        where q.delivery_id = $1`,
      [waiting.id],
    );
    assert.ok(
      Number(rows[0]?.gap) >= 2.5 && Number(rows[0]?.gap) < 5,
      `next attempt ${rows[0]?.gap} s later, not the 3 s asked`,
    );
    assert.equal(Number(rows[0]?.captured), 4096);
  });

  test('test event: core.webhook.test to that endpoint only, whatever its eventTypes; 404 otherwise', async () => {
    const tenant = await service.tenant();
    const target = await startReceiver();
    const bystander = await startReceiver();
    const { id, secret } = await endpoint(tenant, target.url, ['billing.invoice.paid']);
    await endpoint(tenant, bystander.url, ['*']);
    const sent = await post(tenant, `/core/v1/webhook-endpoints/${id}/test`);
    assert.equal(sent.status, 200, sent.text);
    assert.deepEqual(Object.keys(sent.body).sort(), ['endpointId', 'eventId']);
    assert.equal(sent.body.endpointId, id);
    await target.waitFor(1);
    const event = new Webhook(secret).verify(
      target.received[0]!.body,
      target.received[0]!.headers as Record<string, string>,
    ) as {
      type: string;
      id: string;
    };
    assert.equal(event.type, 'core.webhook.test');
    assert.equal(event.id, sent.body.eventId);
    await settled(tenant, sent.body.eventId, 'delivered');
    assert.equal(bystander.received.length, 0);
    const other = await service.tenant();
    expectProblem(await post(other, `/core/v1/webhook-endpoints/${id}/test`), 404, 'NOT_FOUND');
    expectProblem(
      await post(tenant, '/core/v1/webhook-endpoints/00000000-0000-4000-8000-000000000000/test'),
      404,
      'NOT_FOUND',
    );
  });

  test('replay: same eventId, new deliveries to the endpoints subscribed now, signed afresh', async () => {
    const tenant = await service.tenant();
    const first = await startReceiver();
    const { secret } = await endpoint(tenant, first.url, ['pay.payment.succeeded']);
    const eventId = (await publish(tenant, 'pay.payment.succeeded', { order: 7 })).body.eventId;
    await settled(tenant, eventId, 'delivered');
    const later = await startReceiver();
    const laterEndpoint = await endpoint(tenant, later.url, ['*']);

    const replayed = await post(tenant, `/core/v1/events/${eventId}/replay`);
    assert.equal(replayed.status, 200, replayed.text);
    assert.deepEqual(replayed.body, { eventId, deliveries: 2 });
    await first.waitFor(2);
    await later.waitFor(1);
    for (const [receiver, key] of [
      [first, secret],
      [later, laterEndpoint.secret],
    ] as const) {
      const got = receiver.received.at(-1)!;
      const event = new Webhook(key).verify(got.body, got.headers as Record<string, string>) as {
        id: string;
        data: unknown;
      };
      assert.equal(event.id, eventId);
      assert.deepEqual(event.data, { order: 7 });
    }
    const kinds = (await get(tenant, `/core/v1/events/${eventId}`)).body.deliveries.map(
      (d: { kind: string }) => d.kind,
    );
    assert.deepEqual(kinds.sort(), ['dispatch', 'replay', 'replay']);

    const lonely = await service.tenant();
    const nobody = (await publish(lonely, 'pay.payment.succeeded')).body.eventId;
    assert.deepEqual((await post(lonely, `/core/v1/events/${nobody}/replay`)).body, {
      eventId: nobody,
      deliveries: 0,
    });
    expectProblem(await post(lonely, `/core/v1/events/${eventId}/replay`), 404, 'NOT_FOUND');
    expectProblem(
      await post(tenant, '/core/v1/events/00000000-0000-4000-8000-000000000000/replay'),
      404,
      'NOT_FOUND',
    );
  });

  test('publishing: 413 over 256 KiB of data, 400 for reserved or malformed types, subjects normalized', async () => {
    const tenant = await service.tenant();
    expectProblem(
      await publish(tenant, 'pay.big.thing', { blob: 'x'.repeat(256 * 1024) }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    expectProblem(await publish(tenant, 'core.webhook.test'), 400, 'VALIDATION_FAILED');
    expectProblem(await publish(tenant, 'Pay.Thing'), 400, 'VALIDATION_FAILED');
    expectProblem(await publish(tenant, '*'), 400, 'VALIDATION_FAILED');
    expectProblem(
      await publish(tenant, 'pay.thing', { a: 1 }, [{ type: 'email', value: 'nope' }]),
      400,
      'VALIDATION_FAILED',
    );
    assert.equal((await publish(tenant, 'pay.small.thing', { blob: 'x'.repeat(200 * 1024) })).status, 202);
  });

  test('erasing a subject redacts the events that concern it, and their captured responses', async () => {
    const tenant = await service.tenant();
    const receiver = await startReceiver((received, _i, response) =>
      response.writeHead(200).end(received.body),
    );
    await endpoint(tenant, receiver.url);
    const eventId = (
      await publish(tenant, 'notify.email.sent', { to: 'dana@example.com' }, [
        { type: 'email', value: 'Dana@Example.com' },
      ])
    ).body.eventId;
    await settled(tenant, eventId, 'delivered');
    const erased = await service.request('POST', '/core/v1/subjects/erase', {
      key: tenant.key,
      body: { subject: { type: 'email', value: 'dana@example.com' } },
      headers: idem(),
    });
    assert.deepEqual(erased.body, {
      erasureId: erased.body.erasureId,
      capabilities: [{ capability: 'core', erased: 1 }],
    });
    const event = (await get(tenant, `/core/v1/events/${eventId}`)).body;
    assert.equal(event.redacted, true);
    assert.deepEqual(event.data, { redacted: true });
    assert.equal(event.type, 'notify.email.sent');
    const { rows } = await service.db.query(
      `select a.response_body from delivery_attempts a join deliveries d on d.project_id = a.project_id and d.id = a.delivery_id where d.event_id = $1`,
      [eventId],
    );
    assert.ok(rows.length > 0 && rows.every((r) => r.response_body === null));
  });
});
