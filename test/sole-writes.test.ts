// Sole writes: an idempotent operation whose whole write is one statement goes with its claim and its
// record in that statement (src/idempotency/sole.ts). The rules of idempotency hold on that way too (one
// effect, replays, 409 while it runs, 422 for another request, a record forgotten after 24 hours), and a
// write that is not what was predicted changes nothing and goes the ordinary way, once.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { manualClock } from '../src/lib/clock.ts';
import { EFFECTS_TABLE, effectsRoute } from './fixtures/effects-route.ts';
import { expectProblem, startService } from './helpers/app.ts';
import { plainAndOrdered } from './helpers/endpoints.ts';
import { soleWritesOf } from './helpers/metrics.ts';

const clock = manualClock(new Date('2026-11-21T12:00:00Z'));
const service = await startService({ clock, setup: effectsRoute });
await service.db.query(EFFECTS_TABLE);
const tenant = await service.tenant();

const post = (path: string, body: unknown, idempotencyKey: string, key = tenant.key) =>
  service.request('POST', path, { key, body, headers: { 'idempotency-key': idempotencyKey } });
const effects = async (note: string) =>
  Number(
    (await service.db.query('select count(*) as n from test_effects where note = $1', [note])).rows[0]?.n,
  );
const soleWrites = () => soleWritesOf(service);
const recorded = async (key: string) =>
  (
    await service.db.query('select status from idempotency_keys where project_id = $1 and key = $2', [
      tenant.projectId,
      key,
    ])
  ).rows;

describe('sole writes', () => {
  test('effect and record in one statement: replayed after, 422 for another body, one effect', async () => {
    const before = await soleWrites();
    const first = await post('/test/sole-effects', { note: 'sole-1' }, 'sole-1');
    assert.equal(first.status, 201);
    assert.deepEqual(first.body, { note: 'sole-1', id: null });
    assert.equal((await soleWrites()).committed, before.committed + 1);
    assert.deepEqual(await recorded('sole-1'), [{ status: 201 }]);
    const again = await post('/test/sole-effects', { note: 'sole-1' }, 'sole-1');
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);
    expectProblem(
      await post('/test/sole-effects', { note: 'other' }, 'sole-1'),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
    assert.equal(await effects('sole-1'), 1);
    assert.equal(await effects('other'), 0);
    const after = await soleWrites();
    assert.equal(after.committed, before.committed + 1, 'a replay writes nothing');
    assert.equal(after.missed, before.missed, 'a recorded key is read on the slow path');
  });

  test('while its statement runs, the same key gets 409 with retry-after; one effect', async () => {
    const slow = post('/test/sole-effects', { note: 'sole-busy', sleepMs: 400 }, 'sole-busy');
    await new Promise((resolve) => setTimeout(resolve, 150));
    const meanwhile = await post('/test/sole-effects', { note: 'sole-busy', sleepMs: 400 }, 'sole-busy');
    expectProblem(meanwhile, 409, 'IDEMPOTENCY_KEY_IN_PROGRESS');
    assert.equal(meanwhile.headers.get('retry-after'), '1');
    assert.equal((await slow).status, 201);
    assert.equal(await effects('sole-busy'), 1);
  });

  test('20 concurrent identical requests: one effect, the rest replays or 409', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => post('/test/sole-effects', { note: 'sole-race' }, 'sole-race')),
    );
    const fresh = answers.filter((a) => a.status === 201 && !a.headers.get('idempotent-replayed'));
    assert.equal(fresh.length, 1);
    for (const answer of answers) assert.ok([201, 409].includes(answer.status), `${answer.status}`);
    assert.equal(await effects('sole-race'), 1);
  });

  test('not as predicted: nothing from the sole statement, the ordinary way once, its answer recorded', async () => {
    const before = await soleWrites();
    const response = await post('/test/sole-effects', { note: 'sole-miss', unpredicted: true }, 'sole-miss');
    assert.equal(response.status, 201);
    assert.equal(
      await effects('sole-miss'),
      1,
      'the ordinary way wrote it once, the sole statement not at all',
    );
    assert.deepEqual(await soleWrites(), { committed: before.committed, missed: before.missed + 1 });
    const again = await post('/test/sole-effects', { note: 'sole-miss', unpredicted: true }, 'sole-miss');
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(await effects('sole-miss'), 1);
  });

  test('a record past 24 hours does not stand in the way: the key runs afresh', async () => {
    assert.equal((await post('/test/sole-effects', { note: 'sole-old' }, 'sole-old')).status, 201);
    clock.advance(25 * 60 * 60 * 1000);
    const later = await post('/test/sole-effects', { note: 'sole-new' }, 'sole-old');
    assert.equal(later.status, 201);
    assert.equal(later.headers.get('idempotent-replayed'), null);
    assert.deepEqual(later.body, { note: 'sole-new', id: null });
    assert.equal(await effects('sole-new'), 1);
    const replay = await post('/test/sole-effects', { note: 'sole-new' }, 'sole-old');
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  });
});

describe('a webhook endpoint created as a sole write', () => {
  const create = (key: string, body: unknown, idempotencyKey: string) =>
    service.request('POST', '/core/v1/webhook-endpoints', {
      key,
      body,
      headers: { 'idempotency-key': idempotencyKey },
    });

  test('answers what the endpoint is, audits it, and a replay answers the same', async () => {
    const owner = await service.tenant();
    const before = await soleWrites();
    const body = { url: 'https://93.184.216.34/hook', eventTypes: ['pay.payment.succeeded'] };
    const created = await create(owner.key, body, 'c-1');
    assert.equal(created.status, 201);
    assert.equal((await soleWrites()).committed, before.committed + 1);
    assert.deepEqual(created.body.unknownEventTypes, ['pay.payment.succeeded'], 'nobody declares it here');
    const { secret, unknownEventTypes, ...endpoint } = created.body;
    assert.match(secret, /^whsec_/);
    const read = await service.request('GET', `/core/v1/webhook-endpoints/${endpoint.id}`, {
      key: owner.key,
    });
    assert.deepEqual(read.body, endpoint, 'the predicted answer is what the database holds');
    const replay = await create(owner.key, body, 'c-1');
    assert.deepEqual(replay.body, created.body);
    const audit = await service.db.query(
      `select action, target_id::text from audit_log where project_id = $1 and action = 'endpoint.created'`,
      [owner.projectId],
    );
    assert.deepEqual(audit.rows, [{ action: 'endpoint.created', target_id: endpoint.id }]);
  });

  test('the catalogue as last read predicts the answer; a type declared since is a miss, answered truly', async () => {
    const owner = await service.tenant();
    const declare = (name: string) =>
      service.request('PUT', `/core/v1/event-types/${name}`, {
        key: owner.key,
        body: { description: name },
        headers: { 'idempotency-key': `declare-${name}` },
      });
    assert.ok([200, 201].includes((await declare('shop.order.paid')).status));
    const before = await soleWrites();
    const url = 'https://93.184.216.34/hook';
    const first = await create(
      owner.key,
      { url, eventTypes: ['shop.order.paid', 'shop.cart.lost', 'pay.*'] },
      'c-2',
    );
    assert.equal(first.status, 201);
    assert.deepEqual(first.body.unknownEventTypes, ['shop.cart.lost']);
    assert.deepEqual(await soleWrites(), { committed: before.committed + 1, missed: before.missed });
    // Declared after this process read the catalogue: predicted unknown, found declared.
    assert.ok([200, 201].includes((await declare('shop.cart.lost')).status));
    const second = await create(owner.key, { url, eventTypes: ['shop.cart.lost'] }, 'c-3');
    assert.equal(second.status, 201);
    assert.deepEqual(second.body.unknownEventTypes, []);
    assert.deepEqual(await soleWrites(), { committed: before.committed + 1, missed: before.missed + 1 });
    const list = await service.request('GET', '/core/v1/webhook-endpoints', { key: owner.key });
    assert.equal(list.body.data.length, 2, 'a missed sole write left nothing behind');
  });

  test('the 21st: the sole write misses, and the refusal is recorded the ordinary way', async () => {
    const owner = await service.tenant();
    const body = { url: 'https://93.184.216.34/hook', eventTypes: ['*'] };
    for (let i = 0; i < 20; i++) assert.equal((await create(owner.key, body, `fill-${i}`)).status, 201);
    const before = await soleWrites();
    expectProblem(await create(owner.key, body, 'fill-20'), 400, 'WEBHOOK_ENDPOINT_LIMIT_REACHED');
    assert.equal((await soleWrites()).missed, before.missed + 1);
    const replay = await create(owner.key, body, 'fill-20');
    assert.equal(replay.status, 400);
    assert.equal(replay.body.code, 'WEBHOOK_ENDPOINT_LIMIT_REACHED');
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  });
});

describe('a rotation and a deletion as sole writes', () => {
  const write = (key: string, path: string, idempotencyKey: string) =>
    service.request('POST', path, { key, headers: { 'idempotency-key': idempotencyKey } });

  test('a rotation: one statement, the secret it answers is the active one, an unknown id is a 404 miss', async () => {
    const owner = await service.tenant();
    const created = await service.request('POST', '/core/v1/webhook-endpoints', {
      key: owner.key,
      body: { url: 'https://93.184.216.34/hook', eventTypes: ['*'] },
      headers: { 'idempotency-key': 'r-0' },
    });
    const id = created.body.id;
    const before = await soleWrites();
    const rotated = await write(owner.key, `/core/v1/webhook-endpoints/${id}/rotate-secret`, 'r-1');
    assert.equal(rotated.status, 200);
    assert.equal(rotated.body.id, id);
    assert.match(rotated.body.secret, /^whsec_/);
    assert.notEqual(rotated.body.secret, created.body.secret);
    assert.equal((await soleWrites()).committed, before.committed + 1);
    const read = await service.request('GET', `/core/v1/webhook-endpoints/${id}`, { key: owner.key });
    assert.equal(read.body.hasPreviousSecret, true);
    const replay = await write(owner.key, `/core/v1/webhook-endpoints/${id}/rotate-secret`, 'r-1');
    assert.deepEqual(replay.body, rotated.body, 'the same secret, replayed');
    const unknown = '0193b0a4-1e0b-7d4e-9f10-a1b2c3d4e5f6';
    const missing = await write(owner.key, `/core/v1/webhook-endpoints/${unknown}/rotate-secret`, 'r-2');
    expectProblem(missing, 404, 'NOT_FOUND');
    assert.equal((await soleWrites()).missed, before.missed + 1);
    const audited = await service.db.query(
      `select count(*)::int as n from audit_log where project_id = $1 and action = 'endpoint.secret_rotated'`,
      [owner.projectId],
    );
    assert.equal(audited.rows[0]?.n, 1, 'audited once: not for the 404');
  });

  test('a deletion: one statement with its cancels; an ordered endpoint and an unknown one the ordinary way', async () => {
    const owner = await service.tenant();
    const [plain, ordered] = await plainAndOrdered(service, owner.key, 'd');
    for (const key of ['d-3', 'd-4'])
      await service.request('POST', '/core/v1/events', {
        key: owner.key,
        body: { type: 'shop.order.paid', data: {} },
        headers: { 'idempotency-key': key },
      });
    const states = async (id: string) =>
      (
        await service.db.query(`select state, last_error from deliveries where endpoint_id = $1`, [id])
      ).rows.map((row) => `${row.state}: ${row.last_error}`);
    const remove = (id: string, key: string) =>
      service.request('DELETE', `/core/v1/webhook-endpoints/${id}`, {
        key: owner.key,
        headers: { 'idempotency-key': key },
      });
    const before = await soleWrites();
    const removed = await remove(plain, 'd-5');
    assert.equal(removed.status, 204);
    assert.equal((await soleWrites()).committed, before.committed + 1);
    assert.deepEqual(await states(plain), Array(2).fill('cancelled: endpoint deleted'));
    const replay = await remove(plain, 'd-5');
    assert.equal(replay.status, 204);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    expectProblem(await remove(plain, 'd-6'), 404, 'NOT_FOUND');
    assert.equal((await remove(ordered, 'd-7')).status, 204);
    assert.deepEqual(await states(ordered), Array(2).fill('cancelled: endpoint deleted'));
    assert.deepEqual(await soleWrites(), { committed: before.committed + 1, missed: before.missed + 2 });
    const count = await service.db.query('select webhook_endpoints from projects where id = $1', [
      owner.projectId,
    ]);
    assert.equal(count.rows[0]?.webhook_endpoints, 0, 'the project counts its endpoints truly');
  });
});
