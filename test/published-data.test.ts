// What a receiver gets is what was published: the data's own JSON text, member order, numbers past 2^53
// and escapes included, on every path that shows it (the first delivery, a replay, a recovery of a dead
// delivery, the event read route), byte for byte when the published text was compact; whitespace outside
// strings is the one thing taken out. A member named twice is refused: receivers' parsers disagree on it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { client } from './helpers/api.ts';
import { expectProblem, startService } from './helpers/app.ts';
import { answerWith, eventually, startReceiver } from './helpers/receiver.ts';

const service = await startService({
  env: {
    PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
    PLATFORM_RETRY_SCHEDULE: '1',
    PLATFORM_DELIVERY_TIMEOUT_MS: '2000',
    PLATFORM_WORKER_POLL_MS: '100',
  },
  worker: true,
});

const DATA =
  '{"zeta":1,"alpha":2,"big":12345678901234567890,"f":1.10,"e":"caf\\u00e9 \\"q\\"","n":[1e400,-0,0.1e-7],"10":"ten","2":"two"}';

/** Publishes raw body text; the answer. */
const publishRaw = (key: string, body: string, idempotencyKey: string) =>
  service.request('POST', '/core/v1/events', {
    key,
    rawBody: body,
    headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
  });

/** The `data` of a delivery's body, as text (what follows `"data":` to the envelope's end). */
const dataText = (body: string | undefined) => (body ?? '').slice((body ?? '').indexOf('"data":') + 7, -1);

describe('published data arrives as published', () => {
  test('delivery, replay, recovery and the event read route all carry the publisher’s own text', async () => {
    const tenant = await service.tenant();
    const api = client(service, tenant);
    const receiver = await startReceiver();
    const { id: endpointId, secret } = await api.endpoint(receiver.url, ['pay.*']);

    const published = await publishRaw(tenant.key, `{"type":"pay.raw.sent","data":${DATA}}`, 'raw-1');
    assert.equal(published.status, 202, published.text);
    const { eventId } = published.body;
    await receiver.waitFor(1);
    const first = receiver.received[0];
    assert.ok(first);
    assert.equal(dataText(first.body), DATA, 'the delivery');
    // The signature covers those exact bytes, as an independent verifier checks them.
    new Webhook(secret).verify(first.body, first.headers as Record<string, string>);

    const read = await api.get(`/core/v1/events/${eventId}`);
    assert.equal(read.status, 200);
    assert.ok(read.text.includes(`"data":${DATA},`), `the event read route: ${read.text.slice(0, 300)}`);
    assert.equal(read.headers.get('content-type'), 'application/json; charset=utf-8');

    await eventually(async () => (await api.history(endpointId)).find((d) => d.state === 'delivered'));
    const replayed = await api.post(`/core/v1/events/${eventId}/replay`);
    assert.equal(replayed.status, 200, replayed.text);
    await receiver.waitFor(2);
    assert.equal(dataText(receiver.received[1]?.body), DATA, 'the replay');

    // A dead delivery, recovered: a new delivery of the same event, its data as published.
    receiver.answer(answerWith(500));
    const dead = await publishRaw(tenant.key, `{"type":"pay.raw.dead","data":${DATA}}`, 'raw-2');
    assert.equal(dead.status, 202);
    await eventually(async () => {
      const history = await api.history(endpointId);
      return history.find((d) => d.eventId === dead.body.eventId && d.state === 'dead');
    });
    receiver.answer(answerWith(204));
    const count = receiver.received.length;
    const recovered = await api.post(`/core/v1/webhook-endpoints/${endpointId}/recover`, {
      states: ['dead'],
      since: new Date(Date.now() - 60_000).toISOString(),
    });
    assert.equal(recovered.status, 202, recovered.text);
    await receiver.waitFor(count + 1);
    const last = receiver.received.at(-1);
    assert.equal(JSON.parse(last?.body ?? '{}').id, dead.body.eventId);
    assert.equal(dataText(last?.body), DATA, 'the recovery');
  });

  test('whitespace outside strings is taken out; inside strings it stays', async () => {
    const tenant = await service.tenant();
    const receiver = await startReceiver();
    await client(service, tenant).endpoint(receiver.url, ['pay.*']);
    const spaced = '{ "b" : [ 1 ,\n\t2 ] , "a" : "x  y" }';
    const published = await publishRaw(tenant.key, `{"type":"pay.spaced","data":${spaced}}`, 'spaced');
    assert.equal(published.status, 202, published.text);
    await receiver.waitFor(1);
    assert.equal(dataText(receiver.received[0]?.body), '{"b":[1,2],"a":"x  y"}');
  });

  test('a member named twice in the data is refused with a pointer to it', async () => {
    const tenant = await service.tenant();
    const twice = await publishRaw(
      tenant.key,
      '{"type":"pay.twice","data":{"order":{"amount":1,"am\\u006funt":2}}}',
      'twice',
    );
    expectProblem(twice, 400, 'VALIDATION_FAILED');
    assert.equal(twice.body.errors[0].pointer, '/data/order/amount');
  });

  test('data checked against a schema is checked as parsed, and delivered as written', async () => {
    const tenant = await service.tenant();
    const api = client(service, tenant);
    const receiver = await startReceiver();
    await api.endpoint(receiver.url, ['pay.*']);
    const declared = await api.call('PUT', '/core/v1/event-types/pay.amount.set', {
      description: 'An amount',
      schema: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
    });
    assert.equal(declared.status, 200, declared.text);
    const body = '{"type":"pay.amount.set","data":{"amount":90071992547409930001}}';
    assert.equal((await publishRaw(tenant.key, body, 'big')).status, 202);
    await receiver.waitFor(1);
    assert.equal(dataText(receiver.received[0]?.body), '{"amount":90071992547409930001}');
  });
});
