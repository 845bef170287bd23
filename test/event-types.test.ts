// The event-type catalogue: declaring types, their schemas checked on publish, the platform's own types,
// and endpoints' patterns (a prefix, `*`, `core.*`) deciding who receives what.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CapabilityRegistry } from '../src/registry.ts';
import { client } from './helpers/api.ts';
import { expectProblem, startService } from './helpers/app.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const service = await startService({
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100' },
  worker: true,
});

const PAYMENT_SCHEMA = {
  type: 'object',
  properties: {
    amount: { type: 'integer', minimum: 1 },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
  },
  required: ['amount', 'currency'],
};

describe('event types', () => {
  test('PUT declares a type (200 EventType), again replaces it; GET lists it with the platform’s, by name', async () => {
    const api = client(service, await service.tenant());
    const put = await api.call('PUT', '/core/v1/event-types/pay.payment.succeeded', {
      description: 'A payment went through',
      schema: PAYMENT_SCHEMA,
      example: { amount: 100, currency: 'EUR' },
    });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(
      { ...put.body, createdAt: typeof put.body.createdAt },
      {
        name: 'pay.payment.succeeded',
        description: 'A payment went through',
        schema: PAYMENT_SCHEMA,
        example: { amount: 100, currency: 'EUR' },
        source: 'project',
        subscribers: 0,
        createdAt: 'string',
      },
    );
    const replaced = await api.call('PUT', '/core/v1/event-types/pay.payment.succeeded', {
      description: 'Paid',
    });
    assert.equal(replaced.status, 200);
    assert.equal(replaced.body.schema, null);
    assert.equal(replaced.body.createdAt, put.body.createdAt, 'replacing keeps when it was first declared');

    await api.endpoint('https://hooks.example.com/a', ['pay.*']);
    await api.endpoint('https://hooks.example.com/b', ['*']);
    await api.endpoint('https://hooks.example.com/c', ['core.*']);
    const listed = await api.get('/core/v1/event-types');
    assert.equal(listed.status, 200);
    const names = listed.body.data.map((t: { name: string }) => t.name);
    assert.deepEqual(names, [...names].sort());
    const byName = Object.fromEntries(listed.body.data.map((t: { name: string }) => [t.name, t]));
    assert.equal(byName['pay.payment.succeeded'].subscribers, 2, 'pay.* and *');
    for (const type of [
      'core.endpoint.disabled',
      'core.endpoint.paused',
      'core.endpoint.resumed',
      'core.delivery.dead',
    ]) {
      assert.equal(byName[type].source, 'platform');
      assert.equal(byName[type].createdAt, null);
      assert.equal(byName[type].subscribers, 1, `${type}: core.* only (* does not take core.*)`);
      assert.ok(byName[type].schema && byName[type].example);
    }
  });

  test('PUT refuses names under core., malformed names, invalid schemas and examples that fail them → 400', async () => {
    const api = client(service, await service.tenant());
    const put = (name: string, body: unknown) => api.call('PUT', `/core/v1/event-types/${name}`, body);
    expectProblem(await put('core.my.thing', { description: 'x' }), 400, 'VALIDATION_FAILED');
    expectProblem(await put('Not.A.Type', { description: 'x' }), 400, 'VALIDATION_FAILED');
    expectProblem(await put('single', { description: 'x' }), 400, 'VALIDATION_FAILED');
    const invalid = await put('pay.bad.schema', { description: 'x', schema: { type: 'nonsense' } });
    expectProblem(invalid, 400, 'VALIDATION_FAILED');
    assert.equal(invalid.body.errors[0].pointer, '/schema');
    const remote = await put('pay.remote.schema', {
      description: 'x',
      schema: { $ref: 'https://schemas.example.com/payment.json' },
    });
    expectProblem(remote, 400, 'VALIDATION_FAILED');
    const example = await put('pay.bad.example', {
      description: 'x',
      schema: PAYMENT_SCHEMA,
      example: { amount: 0, currency: 'euro' },
    });
    expectProblem(example, 400, 'VALIDATION_FAILED');
    assert.deepEqual(example.body.errors.map((e: { pointer: string }) => e.pointer).sort(), [
      '/example/amount',
      '/example/currency',
    ]);
    expectProblem(await put('pay.no.description', {}), 400, 'VALIDATION_FAILED');
    expectProblem(await api.call('DELETE', '/core/v1/event-types/pay.never.declared'), 404, 'NOT_FOUND');
    expectProblem(await api.call('DELETE', '/core/v1/event-types/core.delivery.dead'), 404, 'NOT_FOUND');
  });

  test('publishing data that fails its type’s schema → 400 with pointers into /data; valid data is accepted', async () => {
    const api = client(service, await service.tenant());
    await api.call('PUT', '/core/v1/event-types/pay.payment.succeeded', {
      description: 'Paid',
      schema: PAYMENT_SCHEMA,
    });
    const bad = await api.call('POST', '/core/v1/events', {
      type: 'pay.payment.succeeded',
      data: { amount: -5, currency: 'eur', extra: true },
    });
    expectProblem(bad, 400, 'VALIDATION_FAILED');
    assert.deepEqual(bad.body.errors.map((e: { pointer: string }) => e.pointer).sort(), [
      '/data/amount',
      '/data/currency',
    ]);
    const missing = await api.call('POST', '/core/v1/events', { type: 'pay.payment.succeeded', data: {} });
    expectProblem(missing, 400, 'VALIDATION_FAILED');
    assert.equal(missing.body.errors.length, 2);
    await api.publish('pay.payment.succeeded', { amount: 5, currency: 'EUR' });
    // A catastrophic pattern is run by RE2 in linear time: a backtracking engine would not answer at all
    // (how fast is not this test's business, only that the refusal comes).
    await api.call('PUT', '/core/v1/event-types/pay.redos.thing', {
      description: 'A pattern that backtracks in a backtracking engine',
      schema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } },
    });
    const slow = await api.call('POST', '/core/v1/events', {
      type: 'pay.redos.thing',
      data: { s: `${'a'.repeat(50_000)}!` },
    });
    expectProblem(slow, 400, 'VALIDATION_FAILED');
    // Types without a schema, or not declared, are not checked; once forgotten, a type is not checked.
    await api.publish('pay.undeclared.thing', { anything: [1, 'two'] });
    assert.equal((await api.call('DELETE', '/core/v1/event-types/pay.payment.succeeded')).status, 204);
    await api.publish('pay.payment.succeeded', { amount: 'any' });
  });

  test('endpoint patterns: a prefix takes its types, * every type but core.*, core.* the platform’s', async () => {
    const api = client(service, await service.tenant());
    const [prefix, star, exact, core] = await Promise.all([
      startReceiver(),
      startReceiver(),
      startReceiver(),
      startReceiver(),
    ]);
    const created = await api.endpoint(prefix.url, ['pay.payment.*', 'billing.x.y']);
    assert.deepEqual(created.unknownEventTypes, ['billing.x.y'], 'patterns are not reported');
    const starred = await api.endpoint(star.url, ['*']);
    await api.endpoint(exact.url, ['pay.refund.issued']);
    await api.endpoint(core.url, ['core.endpoint.*']);
    await api.publish('pay.payment.succeeded');
    await api.publish('pay.payment.failed');
    await api.publish('pay.refund.issued');
    await api.publish('pay.paymentx.other'); // not under pay.payment.
    await star.waitFor(4);
    assert.equal((await api.post(`/core/v1/webhook-endpoints/${starred.id}/pause`)).status, 200);
    await prefix.waitFor(2);
    await exact.waitFor(1);
    await core.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const types = (receiver: typeof prefix) =>
      receiver.received.map((r) => JSON.parse(r.body.toString()).type).sort();
    assert.deepEqual(types(prefix), ['pay.payment.failed', 'pay.payment.succeeded']);
    assert.deepEqual(types(star), [
      'pay.payment.failed',
      'pay.payment.succeeded',
      'pay.paymentx.other',
      'pay.refund.issued',
    ]);
    assert.deepEqual(types(exact), ['pay.refund.issued']);
    assert.deepEqual(
      types(core),
      ['core.endpoint.paused'],
      '* never took the pause event; core.endpoint.* did',
    );
    const listed = await api.get('/core/v1/event-types');
    const paused = listed.body.data.find((t: { name: string }) => t.name === 'core.endpoint.paused');
    assert.equal(paused.subscribers, 1);
    await eventually(async () => (await api.history(starred.id)).length === 4);
  });

  test('a pattern must be a type, * or a prefix ending in .* → 400 otherwise', async () => {
    const api = client(service, await service.tenant());
    for (const eventTypes of [['pay*'], ['*.payment'], ['pay.*.x'], ['.*'], ['PAY.*']]) {
      const response = await api.call('POST', '/core/v1/webhook-endpoints', {
        url: 'https://hooks.example.com/',
        eventTypes,
      });
      expectProblem(response, 400, 'VALIDATION_FAILED');
    }
  });
});

describe('event types a capability declares', () => {
  test('listed as the platform’s, their schema checked on publish, not declarable by a project', async () => {
    const registry = new CapabilityRegistry();
    registry.register({
      name: 'pay',
      eventTypes: [
        {
          name: 'pay.charge.captured',
          description: 'A charge was captured',
          schema: { type: 'object', required: ['chargeId'], properties: { chargeId: { type: 'string' } } },
          example: { chargeId: 'ch_1' },
        },
      ],
    });
    const withPay = await startService({ registry });
    const api = client(withPay, await withPay.tenant());
    const listed = (await api.get('/core/v1/event-types')).body.data;
    const charge = listed.find((t: { name: string }) => t.name === 'pay.charge.captured');
    assert.equal(charge.source, 'platform');
    assert.deepEqual(charge.example, { chargeId: 'ch_1' });
    const bad = await api.call('POST', '/core/v1/events', { type: 'pay.charge.captured', data: { id: 1 } });
    expectProblem(bad, 400, 'VALIDATION_FAILED');
    assert.equal(bad.body.errors[0].pointer, '/data');
    await api.publish('pay.charge.captured', { chargeId: 'ch_2' });
    const declared = await api.call('PUT', '/core/v1/event-types/pay.charge.captured', {
      description: 'mine',
    });
    expectProblem(declared, 400, 'VALIDATION_FAILED');
  });
});

describe('the catalogue’s limits', () => {
  test('the 1,000-type limit holds under concurrency: 20 declarations at 990 leave exactly 1,000', async () => {
    const tenant = await service.tenant();
    const api = client(service, tenant);
    await service.db.query(
      `insert into event_types (project_id, name, description)
       select $1, 'seed.type_' || n, 'seeded' from generate_series(1, 990) as n`,
      [tenant.projectId],
    );
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.call('PUT', `/core/v1/event-types/race.type_${i}`, { description: 'racing' }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [...Array(10).fill(200), ...Array(10).fill(400)], JSON.stringify(statuses));
    for (const refused of answers.filter((a) => a.status === 400)) {
      expectProblem(refused, 400, 'EVENT_TYPE_LIMIT_REACHED');
    }
    const { rows } = await service.db.query<{ n: number }>(
      'select count(*)::int as n from event_types where project_id = $1',
      [tenant.projectId],
    );
    assert.equal(rows[0]?.n, 1000);
    const replaced = await api.call('PUT', '/core/v1/event-types/seed.type_1', { description: 'replaced' });
    assert.equal(replaced.status, 200, 'a full catalogue still takes a new version of a type it has');
  });

  test('names of 101 to 128 characters work on every route that takes one; 129 are refused', async () => {
    const api = client(service, await service.tenant());
    const name = `pay.${'a'.repeat(124)}`;
    assert.equal(name.length, 128);
    const put = await api.call('PUT', `/core/v1/event-types/${name}`, {
      description: 'long',
      schema: { type: 'object', required: ['id'] },
    });
    assert.equal(put.status, 200, put.text);
    const listed = await api.get('/core/v1/event-types');
    assert.ok(listed.body.data.some((t: { name: string }) => t.name === name));
    const unchecked = await api.call('POST', '/core/v1/events', { type: name, data: {} });
    expectProblem(unchecked, 400, 'VALIDATION_FAILED');
    assert.equal((await api.call('DELETE', `/core/v1/event-types/${name}`)).status, 204);
    expectProblem(await api.call('DELETE', `/core/v1/event-types/${name}`), 404, 'NOT_FOUND');
    const tooLong = await api.call('PUT', `/core/v1/event-types/${name}a`, { description: 'long' });
    expectProblem(tooLong, 400, 'VALIDATION_FAILED');
  });
});
