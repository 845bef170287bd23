// Publishes and test events as sole writes (src/idempotency/sole.ts): a publish predicts its deliveries
// from the last publish of its kind (events/forecast.ts) and its type's schema as last read
// (catalogue/declared.ts); its statement checks both, and a publish it finds otherwise goes the ordinary
// way, which answers the truth. A test event goes alone to an unordered endpoint.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectProblem, startService } from './helpers/app.ts';
import { plainAndOrdered } from './helpers/endpoints.ts';
import { soleWritesOf } from './helpers/metrics.ts';

const service = await startService();
const soleWrites = () => soleWritesOf(service);
const write = (key: string, path: string, idempotencyKey: string) =>
  service.request('POST', path, { key, headers: { 'idempotency-key': idempotencyKey } });

describe('a publish as a sole write', () => {
  const publish = (key: string, body: unknown, idempotencyKey: string) =>
    service.request('POST', '/core/v1/events', { key, body, headers: { 'idempotency-key': idempotencyKey } });
  const deliveriesOf = async (eventId: string) =>
    Number(
      (await service.db.query('select count(*) as n from deliveries where event_id = $1', [eventId])).rows[0]
        ?.n,
    );
  const subscribe = (key: string, idempotencyKey: string) =>
    service.request('POST', '/core/v1/webhook-endpoints', {
      key,
      body: { url: 'https://93.184.216.34/hook', eventTypes: ['shop.*'] },
      headers: { 'idempotency-key': idempotencyKey },
    });

  test('the last publish of its kind predicts the deliveries; a new subscriber is a miss, answered truly', async () => {
    const owner = await service.tenant();
    for (const key of ['s-1', 's-2']) assert.equal((await subscribe(owner.key, key)).status, 201);
    const event = { type: 'shop.order.paid', data: { order: 1 } };
    const start = await soleWrites();
    const first = await publish(owner.key, event, 'p-1');
    assert.equal(first.status, 202);
    assert.equal(first.body.deliveries, 2);
    assert.deepEqual(await soleWrites(), start, 'nothing predicted yet: the ordinary way');
    const second = await publish(owner.key, event, 'p-2');
    assert.deepEqual(second.body, { eventId: second.body.eventId, deliveries: 2 });
    assert.equal(await deliveriesOf(second.body.eventId), 2);
    assert.equal((await soleWrites()).committed, start.committed + 1);
    const replay = await publish(owner.key, event, 'p-2');
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, second.body);
    assert.equal(await deliveriesOf(second.body.eventId), 2, 'a replay queues nothing');

    assert.equal((await subscribe(owner.key, 's-3')).status, 201);
    const third = await publish(owner.key, event, 'p-3');
    assert.equal(third.body.deliveries, 3);
    assert.equal(await deliveriesOf(third.body.eventId), 3);
    // s-3's create and p-2 committed; p-3 missed.
    assert.deepEqual(await soleWrites(), { committed: start.committed + 2, missed: start.missed + 1 });
    const events = await service.db.query('select count(*)::int as n from events where project_id = $1', [
      owner.projectId,
    ]);
    assert.equal(events.rows[0]?.n, 3, 'the missed statement left no event behind');
    const fourth = await publish(owner.key, event, 'p-4');
    assert.equal(fourth.body.deliveries, 3);
    assert.equal((await soleWrites()).committed, start.committed + 3);
  });

  test('subjects are tagged on the sole way too, and an ordered lane keeps the ordinary way', async () => {
    const owner = await service.tenant();
    const endpoint = await subscribe(owner.key, 'o-1');
    const ordered = await service.request('PATCH', `/core/v1/webhook-endpoints/${endpoint.body.id}`, {
      key: owner.key,
      body: { ordering: 'endpoint' },
      headers: { 'idempotency-key': 'o-2', 'content-type': 'application/merge-patch+json' },
    });
    assert.equal(ordered.status, 200, ordered.text);
    const event = {
      type: 'shop.order.paid',
      data: {},
      subjects: [{ type: 'email', value: 'a@example.com' }],
    };
    const start = await soleWrites();
    for (const key of ['o-3', 'o-4', 'o-5']) assert.equal((await publish(owner.key, event, key)).status, 202);
    assert.deepEqual(await soleWrites(), start, 'an ordered lane is settled by a second statement');
    const held = await service.db.query(
      `select count(*) filter (where held = 'ordered')::int as held from delivery_queue where project_id = $1`,
      [owner.projectId],
    );
    assert.equal(held.rows[0]?.held, 2, 'behind the head of the lane');

    const other = await service.tenant();
    assert.equal((await subscribe(other.key, 'u-1')).status, 201);
    const before = await soleWrites();
    for (const key of ['u-2', 'u-3']) assert.equal((await publish(other.key, event, key)).status, 202);
    assert.equal((await soleWrites()).committed, before.committed + 1, 'the second publish');
    const tags = await service.db.query(
      'select count(*)::int as n from event_subjects where project_id = $1',
      [other.projectId],
    );
    assert.equal(tags.rows[0]?.n, 2, 'each event tagged with its subject, on either way');
  });

  test('a publish that reaches nobody is predicted too (its statement notifies no worker)', async () => {
    const lonely = await service.tenant();
    const before = await soleWrites();
    for (const key of ['n-1', 'n-2', 'n-3']) {
      const published = await publish(lonely.key, { type: 'shop.order.paid', data: {} }, key);
      assert.deepEqual(published.body, { eventId: published.body.eventId, deliveries: 0 });
    }
    assert.equal((await soleWrites()).committed, before.committed + 2);
  });

  test('a schema changed since this process read it: the statement finds out, the data meets the new one', async () => {
    const owner = await service.tenant();
    assert.equal((await subscribe(owner.key, 'v-0')).status, 201);
    const declare = (schema: object, key: string) =>
      service.request('PUT', '/core/v1/event-types/shop.order.paid', {
        key: owner.key,
        body: { description: 'An order was paid', schema },
        headers: { 'idempotency-key': key },
      });
    const needs = (field: string) => ({ type: 'object', required: [field] });
    assert.ok([200, 201].includes((await declare(needs('order'), 'v-1')).status));
    const event = (data: object) => ({ type: 'shop.order.paid', data });
    assert.equal((await publish(owner.key, event({ order: 1 }), 'v-2')).status, 202);
    const before = await soleWrites();
    assert.equal((await publish(owner.key, event({ order: 2 }), 'v-3')).status, 202, 'read and predicted');
    assert.equal((await soleWrites()).committed, before.committed + 1);
    expectProblem(await publish(owner.key, event({}), 'v-4'), 400, 'VALIDATION_FAILED');
    // Within the 5 s this process believes its reading: the schema changes under it.
    assert.ok([200, 201].includes((await declare(needs('customer'), 'v-5')).status));
    const refused = await publish(owner.key, event({ order: 3 }), 'v-6');
    expectProblem(refused, 400, 'VALIDATION_FAILED');
    assert.match(refused.text, /customer/);
    assert.equal((await soleWrites()).missed, before.missed + 1, 'its statement found the type changed');
    const accepted = await publish(owner.key, event({ customer: 'c' }), 'v-7');
    assert.equal(accepted.status, 202);
    assert.deepEqual(
      await soleWrites(),
      { committed: before.committed + 2, missed: before.missed + 1 },
      'the miss read the catalogue again: the next publish is predicted with the new schema',
    );
    const events = await service.db.query(
      `select data from events where project_id = $1 and created_at > now() - interval '1 hour' order by created_at`,
      [owner.projectId],
    );
    assert.deepEqual(
      events.rows.map((row) => row.data),
      [{ order: 1 }, { order: 2 }, { customer: 'c' }],
    );
  });

  test('a test event: one statement to an unordered endpoint; an ordered one and an unknown one the ordinary way', async () => {
    const owner = await service.tenant();
    const [plain, ordered] = await plainAndOrdered(service, owner.key, 't');
    const before = await soleWrites();
    const sent = await write(owner.key, `/core/v1/webhook-endpoints/${plain}/test`, 't-3');
    assert.equal(sent.status, 200, sent.text);
    assert.equal(sent.body.endpointId, plain);
    assert.deepEqual(await soleWrites(), { committed: before.committed + 1, missed: before.missed });
    const queued = await service.db.query(
      `select d.endpoint_id::text, d.kind, q.held
         from deliveries d join delivery_queue q on q.delivery_id = d.id where d.event_id = $1`,
      [sent.body.eventId],
    );
    assert.deepEqual(queued.rows, [{ endpoint_id: plain, kind: 'test', held: null }]);

    const inLane = await write(owner.key, `/core/v1/webhook-endpoints/${ordered}/test`, 't-4');
    assert.equal(inLane.status, 200);
    const head = await service.db.query(`select held from delivery_queue where event_id = $1`, [
      inLane.body.eventId,
    ]);
    assert.deepEqual(head.rows, [{ held: null }], 'the head of its lane, settled by the ordinary way');
    const unknown = '0193b0a4-1e0b-7d4e-9f10-a1b2c3d4e5f6';
    expectProblem(
      await write(owner.key, `/core/v1/webhook-endpoints/${unknown}/test`, 't-5'),
      404,
      'NOT_FOUND',
    );
    assert.deepEqual(await soleWrites(), { committed: before.committed + 1, missed: before.missed + 2 });
  });
});
