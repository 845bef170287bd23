import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { idempotencyStore } from '../src/idempotency/store.ts';
import { manualClock } from '../src/lib/clock.ts';
import { EFFECTS_TABLE, effectsRoute, faults } from './fixtures/effects-route.ts';
import { expectProblem, startService } from './helpers/app.ts';

const clock = manualClock(new Date('2026-11-21T12:00:00Z'));
const service = await startService({ clock, setup: effectsRoute });
await service.db.query(EFFECTS_TABLE);
const tenant = await service.tenant();
let counter = 0;
const freshKey = () => `key-${++counter}-${Date.now()}`;

const post = (path: string, body: unknown, idempotencyKey?: string, key = tenant.key) =>
  service.request('POST', path, {
    key,
    body,
    headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
  });
const effects = async (note: string) =>
  Number(
    (await service.db.query('select count(*) as n from test_effects where note = $1', [note])).rows[0]?.n,
  );

describe('idempotency', () => {
  test('missing or malformed key → 400', async () => {
    expectProblem(await post('/test/effects', { note: 'x' }), 400, 'IDEMPOTENCY_KEY_MISSING');
    expectProblem(await post('/test/effects', { note: 'x' }, ''), 400, 'IDEMPOTENCY_KEY_MISSING');
    for (const bad of ['a'.repeat(256), 'has space', 'tab\there', '""', `"${'a'.repeat(256)}"`]) {
      const response = await post('/test/effects', { note: 'x' }, bad);
      expectProblem(response, 400, 'IDEMPOTENCY_KEY_INVALID');
    }
    // non-ASCII cannot even be sent as a header by fetch; send it raw-encoded as latin1 bytes
    const latin1 = await service.request('POST', '/test/effects', {
      key: tenant.key,
      body: { note: 'x' },
      headers: { 'idempotency-key': Buffer.from('clé', 'latin1').toString('latin1') },
    });
    expectProblem(latin1, 400, 'IDEMPOTENCY_KEY_INVALID');
    assert.equal(await effects('x'), 0);
  });

  test('accepted forms: 255 visible ASCII characters, and a quoted string (same key as its content)', async () => {
    assert.equal((await post('/test/effects', { note: 'long' }, '~'.repeat(255))).status, 201);
    assert.equal((await post('/test/effects', { note: 'quoted' }, '"q-1"')).status, 201);
    const again = await post('/test/effects', { note: 'quoted' }, 'q-1');
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal((await post('/test/effects', { note: 'spaced' }, '"with space"')).status, 201);
  });

  test('order of checks: 401, then 403, then the key, then the body', async () => {
    expectProblem(
      await service.request('POST', '/test/effects', { rawBody: 'not json' }),
      401,
      'API_KEY_MISSING',
    );
    const eraserOnly = await service.tenant(['subjects:erase']);
    const noScope = await service.request('POST', '/core/v1/subjects/erase', {
      key: (await service.tenant(['usage:read'])).key,
      body: {},
    });
    expectProblem(noScope, 403, 'INSUFFICIENT_SCOPE');
    const noKey = await service.request('POST', '/core/v1/subjects/erase', {
      key: eraserOnly.key,
      rawBody: '{bad',
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(noKey, 400, 'IDEMPOTENCY_KEY_MISSING');
    const badBody = await service.request('POST', '/core/v1/subjects/erase', {
      key: eraserOnly.key,
      rawBody: '{bad',
      headers: { 'content-type': 'application/json', 'idempotency-key': freshKey() },
    });
    expectProblem(badBody, 400, 'VALIDATION_FAILED');
  });

  test('same key, same request after completion → the recorded status and body, idempotent-replayed: true', async () => {
    const key = freshKey();
    const first = await post('/test/effects', { note: 'replay' }, key);
    assert.equal(first.status, 201);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const second = await post('/test/effects', { note: 'replay' }, key);
    assert.equal(second.status, 201);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(second.body, first.body);
    assert.notEqual(second.headers.get('x-request-id'), first.headers.get('x-request-id'));
    assert.equal(await effects('replay'), 1);
    // a body with the same members in another order is the same request
    const reordered = await service.request('POST', '/test/effects', {
      key: tenant.key,
      rawBody: '{"note":"replay"}',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
    });
    assert.equal(reordered.headers.get('idempotent-replayed'), 'true');
  });

  test('same key, different request → 422 IDEMPOTENCY_KEY_REUSED: body, route, path id', async () => {
    const key = freshKey();
    assert.equal((await post('/test/things/a', { note: 'reuse' }, key)).status, 201);
    expectProblem(await post('/test/things/a', { note: 'other' }, key), 422, 'IDEMPOTENCY_KEY_REUSED');
    expectProblem(await post('/test/things/b', { note: 'reuse' }, key), 422, 'IDEMPOTENCY_KEY_REUSED');
    expectProblem(await post('/test/effects', { note: 'reuse' }, key), 422, 'IDEMPOTENCY_KEY_REUSED');
    const erase = await service.request('POST', '/core/v1/subjects/erase', {
      key: tenant.key,
      body: { subject: { type: 'external_id', value: 'u1' } },
      headers: { 'idempotency-key': key },
    });
    expectProblem(erase, 422, 'IDEMPOTENCY_KEY_REUSED');
    const deletion = await service.request('DELETE', '/test/things/a', {
      key: tenant.key,
      headers: { 'idempotency-key': key },
    });
    expectProblem(deletion, 422, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(await effects('reuse'), 1);
  });

  test('keys are scoped per project', async () => {
    const other = await service.tenant();
    const key = freshKey();
    assert.equal((await post('/test/effects', { note: 'scoped' }, key)).status, 201);
    const second = await post('/test/effects', { note: 'scoped' }, key, other.key);
    assert.equal(second.status, 201);
    assert.equal(second.headers.get('idempotent-replayed'), null);
    assert.equal(await effects('scoped'), 2);
  });

  test('50 concurrent identical requests: one effect, the rest replays or 409 with retry-after', async () => {
    const key = freshKey();
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => post('/test/effects', { note: 'race', sleepMs: 300 }, key)),
    );
    const performed = responses.filter(
      (r) => r.status === 201 && r.headers.get('idempotent-replayed') !== 'true',
    );
    const replayed = responses.filter(
      (r) => r.status === 201 && r.headers.get('idempotent-replayed') === 'true',
    );
    const busy = responses.filter((r) => r.status === 409);
    assert.equal(performed.length, 1);
    assert.equal(
      performed.length + replayed.length + busy.length,
      50,
      responses.map((r) => r.status).join(','),
    );
    assert.ok(busy.length > 0, 'some arrived while the first was running');
    for (const response of busy) {
      expectProblem(response, 409, 'IDEMPOTENCY_KEY_IN_PROGRESS');
      assert.equal(response.headers.get('retry-after'), '1');
    }
    assert.equal(await effects('race'), 1);
  });

  test('a 5xx releases the key and leaves no effect; the retry performs once', async () => {
    const key = freshKey();
    faults.next = 1;
    expectProblem(await post('/test/effects', { note: 'fault' }, key), 500, 'INTERNAL');
    assert.equal(await effects('fault'), 0);
    const retry = await post('/test/effects', { note: 'fault' }, key);
    assert.equal(retry.status, 201);
    assert.equal(retry.headers.get('idempotent-replayed'), null);
    assert.equal(await effects('fault'), 1);
  });

  test('a domain 4xx is recorded (and replayed), with no effect', async () => {
    const key = freshKey();
    const first = await post('/test/effects', { note: 'refused', refuse: true }, key);
    expectProblem(first, 404, 'NOT_FOUND');
    const again = await post('/test/effects', { note: 'refused', refuse: true }, key);
    assert.equal(again.status, 404);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);
    assert.equal(await effects('refused'), 0);
  });

  test('rejections before the operation are not recorded (401, 403, 400 on the body)', async () => {
    const key = freshKey();
    expectProblem(
      await post('/test/effects', { note: 'early' }, key, 'pk_test_wrongwrongwrongwrongwrongwrong'),
      401,
      'API_KEY_INVALID',
    );
    const invalid = await service.request('POST', '/core/v1/subjects/erase', {
      key: tenant.key,
      body: { subject: { type: 'fax', value: '1' } },
      headers: { 'idempotency-key': key },
    });
    expectProblem(invalid, 400, 'VALIDATION_FAILED');
    assert.equal((await post('/test/effects', { note: 'early' }, key)).status, 201);
  });

  test('a 204 is recorded and replayed without a body', async () => {
    const key = freshKey();
    const first = await service.request('DELETE', '/test/things/z', {
      key: tenant.key,
      headers: { 'idempotency-key': key },
    });
    assert.equal(first.status, 204);
    const again = await service.request('DELETE', '/test/things/z', {
      key: tenant.key,
      headers: { 'idempotency-key': key },
    });
    assert.equal(again.status, 204);
    assert.equal(again.text, '');
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
  });

  test('records are kept 24 hours, then forgotten and purged', async () => {
    const key = freshKey();
    assert.equal((await post('/test/effects', { note: 'old' }, key)).status, 201);
    clock.advance(23 * 3600_000);
    expectProblem(await post('/test/effects', { note: 'new' }, key), 422, 'IDEMPOTENCY_KEY_REUSED');
    clock.advance(3600_000);
    const { rows } = await service.db.query('select count(*) as n from idempotency_keys where key = $1', [
      key,
    ]);
    assert.equal(Number(rows[0]?.n), 1);
    assert.ok((await idempotencyStore(service.db).purge(clock.now())) >= 1);
    const after = await service.db.query('select count(*) as n from idempotency_keys where key = $1', [key]);
    assert.equal(Number(after.rows[0]?.n), 0);
    const reused = await post('/test/effects', { note: 'new' }, key);
    assert.equal(reused.status, 201);
    assert.equal(reused.headers.get('idempotent-replayed'), null);
  });
});
