// An endpoint's filter (contract 0.4): an EventBridge pattern over {type, data}; an event it does not match
// makes no delivery for that endpoint, in a publish, a replay and the platform's own events. A pattern is
// a tenant's code: its size and depth are bounded, it is evaluated by PostgreSQL where deliveries are
// queued, and a hostile one never holds the service's event loop.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileFilter } from '../src/webhooks/filter.ts';
import { expectProblem, startService, type Tenant } from './helpers/app.ts';
import { startReceiver } from './helpers/receiver.ts';

const service = await startService({
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100' },
  worker: true,
});
let n = 0;
const idem = () => ({ 'idempotency-key': `filter-${++n}` });
const call = (who: Tenant, method: string, path: string, body?: unknown) =>
  service.request(method, path, {
    key: who.key,
    body,
    headers: { ...idem(), ...(method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {}) },
  });
const endpoint = async (who: Tenant, filter: unknown, url = 'https://hooks.example.com/f') => {
  const response = await call(who, 'POST', '/core/v1/webhook-endpoints', { url, eventTypes: ['*'], filter });
  assert.equal(response.status, 201, response.text);
  return response.body as { id: string; secret: string; filter: unknown };
};
/** The endpoints an event has a delivery to. */
const reached = async (who: Tenant, eventId: string) =>
  new Set(
    ((await call(who, 'GET', `/core/v1/events/${eventId}`)).body.deliveries as { endpointId: string }[]).map(
      (d) => d.endpointId,
    ),
  );

const EVENTS = [
  {
    type: 'pay.payment.succeeded',
    data: { amount: 15000, currency: 'EUR', tags: ['vip', 'eu'], card: { brand: 'visa' } },
  },
  { type: 'pay.payment.failed', data: { amount: 50, currency: 'usd', reason: 'card.declined' } },
  { type: 'pay.refund.created', data: { amount: 0, currency: 'Eur', note: null } },
  { type: 'shop.order.placed', data: { total: 99.5, items: [{ sku: 'a-1' }], customer: 'cus_ACME.corp' } },
];

/** Each pattern, and the events (by index in EVENTS) it matches. */
const CASES: [unknown, number[]][] = [
  [{ type: ['pay.payment.succeeded'] }, [0]],
  [{ type: ['pay.payment.failed', 'shop.order.placed'] }, [1, 3]],
  [{ type: [{ prefix: 'pay.' }] }, [0, 1, 2]],
  [{ type: [{ suffix: '.created' }] }, [2]],
  [{ data: { currency: ['EUR'] } }, [0]],
  [{ data: { currency: [{ 'equals-ignore-case': 'eur' }] } }, [0, 2]],
  [{ data: { amount: [{ numeric: ['>', 0, '<=', 100] }] } }, [1]],
  [{ data: { amount: [{ numeric: ['>=', 10000] }] } }, [0]],
  [{ data: { amount: [0] } }, [2]],
  [{ data: { tags: ['eu'] } }, [0]], // an array in the event: any of its values
  [{ data: { card: { brand: ['visa'] } } }, [0]],
  [{ data: { note: [null] } }, [2]],
  [{ data: { reason: [{ exists: true }] } }, [1]],
  [{ data: { amount: [{ exists: false }] } }, [3]],
  [{ data: { currency: [{ 'anything-but': ['EUR', 'Eur'] }] } }, [1]], // a missing field is not "anything but"
  [{ data: { customer: [{ 'anything-but': { prefix: 'cus_X' } }] } }, [3]],
  [{ data: { customer: [{ suffix: '.corp' }] } }, [3]], // the dot is a dot, not a regular expression's any
  [{ data: { customer: [{ suffix: 'Xcorp' }] } }, []],
  [{ data: { items: { sku: [{ prefix: 'a-' }] } } }, [3]],
  [{ type: [{ prefix: 'pay.' }], data: { currency: ['usd'] } }, [1]],
  [{ $or: [{ data: { amount: [0] } }, { type: ['shop.order.placed'] }] }, [2, 3]],
  [{ data: { 'we"ird\\key': ['x'] } }, []], // a key that must be quoted as it is
];

describe('endpoint filters', () => {
  test('each operator, on a publish: an event the filter does not match makes no delivery', async () => {
    const ids: string[][] = [[], []];
    // A project holds 20 endpoints at most: the cases go over two.
    const tenants = [await service.tenant(), await service.tenant()];
    for (const [i, [pattern]] of CASES.entries()) {
      const who = tenants[i % 2] as Tenant;
      const created = await endpoint(who, pattern);
      assert.deepEqual(created.filter, pattern);
      ids[i % 2]?.push(created.id);
    }
    const unfiltered = await endpoint(tenants[0] as Tenant, null);
    for (const [e, event] of EVENTS.entries()) {
      for (const [t, who] of tenants.entries()) {
        const published = await call(who, 'POST', '/core/v1/events', event);
        assert.equal(published.status, 202, published.text);
        const got = await reached(who, published.body.eventId);
        assert.equal(published.body.deliveries, got.size, 'the answer counts the deliveries made');
        for (const [i, [pattern, matches]] of CASES.entries()) {
          if (i % 2 !== t) continue;
          const id = (ids[t] as string[])[Math.floor(i / 2)] as string;
          assert.equal(got.has(id), matches.includes(e), `${JSON.stringify(pattern)} on event ${e}`);
        }
        if (t === 0) assert.ok(got.has(unfiltered.id), 'no filter: every event');
      }
    }
  });

  test('a PATCH sets and removes it, binding at its answer; a replay and the platform’s events obey it', async () => {
    const who = await service.tenant();
    const { id } = await endpoint(who, null);
    const publish = async (type: string, data: unknown) =>
      (await call(who, 'POST', '/core/v1/events', { type, data })).body.eventId as string;
    const patched = await call(who, 'PATCH', `/core/v1/webhook-endpoints/${id}`, {
      filter: { data: { big: [true] } },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.filter, { data: { big: [true] } });
    const small = await publish('a.b', { big: false });
    const big = await publish('a.b', { big: true });
    assert.equal((await reached(who, small)).has(id), false);
    assert.equal((await reached(who, big)).has(id), true);
    // A replay of the small one still finds the filter in the way.
    const replayed = await call(who, 'POST', `/core/v1/events/${small}/replay`);
    assert.equal(replayed.body.deliveries, 0, replayed.text);
    // The platform's own events: an endpoint for core.* filtered to one endpoint's events.
    const watcher = await call(who, 'POST', '/core/v1/webhook-endpoints', {
      url: 'https://hooks.example.com/watch',
      eventTypes: ['core.*'],
      filter: { data: { endpointId: [id] } },
    });
    await call(who, 'POST', `/core/v1/webhook-endpoints/${id}/pause`);
    await call(who, 'POST', `/core/v1/webhook-endpoints/${watcher.body.id}/pause`);
    const log = await call(who, 'GET', `/core/v1/webhook-endpoints/${watcher.body.id}/deliveries`);
    assert.deepEqual(
      log.body.data.map((d: { eventType: string }) => d.eventType),
      ['core.endpoint.paused'],
      'its own pause is not about the endpoint it watches',
    );
    const removed = await call(who, 'PATCH', `/core/v1/webhook-endpoints/${id}`, { filter: null });
    assert.equal(removed.body.filter, null);
    assert.equal((await reached(who, await publish('a.b', { big: false }))).has(id), true);
  });

  test('data with a NUL (which jsonb cannot hold) is matched with it read as U+FFFD, and published as written', async () => {
    const who = await service.tenant();
    const { id } = await endpoint(who, { data: { text: [{ prefix: 'a' }] } });
    const published = await call(who, 'POST', '/core/v1/events', { type: 'x.y', data: { text: 'a\u0000b' } });
    assert.equal(published.status, 202, published.text);
    assert.ok((await reached(who, published.body.eventId)).has(id));
    const read = await call(who, 'GET', `/core/v1/events/${published.body.eventId}`);
    assert.match(read.text, /a\\u0000b/, 'the data as written');
  });

  test('delivered to a real receiver: only what matches arrives', async () => {
    const who = await service.tenant();
    const receiver = await startReceiver();
    await endpoint(who, { data: { amount: [{ numeric: ['>', 100] }] } }, receiver.url);
    for (const amount of [5, 500, 50, 5000])
      await call(who, 'POST', '/core/v1/events', { type: 'pay.x', data: { amount } });
    await receiver.waitFor(2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(
      receiver.received.map((r) => JSON.parse(r.body).data.amount).sort((a: number, b: number) => a - b),
      [500, 5000],
    );
  });

  test('an invalid pattern is a 400 naming where', async () => {
    const who = await service.tenant();
    const refused: [unknown, string][] = [
      [{ source: ['x'] }, '/filter/source'],
      [{ data: { a: [{ regex: '.*' }] } }, '/filter/data/a/0'],
      [{ data: { a: [] } }, '/filter/data/a'],
      [{ data: { a: 'x' } }, '/filter/data/a'],
      [{ data: { a: [{ numeric: ['>'] }] } }, '/filter/data/a/0/numeric'],
      [{ data: { a: [{ numeric: ['~', 1] }] } }, '/filter/data/a/0/numeric/0'],
      [{ data: { a: [{ prefix: 1 }] } }, '/filter/data/a/0/prefix'],
      [{ data: { a: [{ prefix: 'x', suffix: 'y' }] } }, '/filter/data/a/0'],
      [{ data: { a: [{ 'anything-but': { exists: true } }] } }, '/filter/data/a/0/anything-but'],
      [{ data: { a: [[1]] } }, '/filter/data/a/0'],
      [{ $or: [{ type: ['a'] }] }, '/filter/$or'],
      [{}, '/filter'],
      [{ data: { a: { b: { c: { d: { e: { f: { g: { h: ['x'] } } } } } } } } }, '/filter/data/a/b/c/d/e/f/g'],
      [{ data: { a: ['x'.repeat(4100)] } }, '/filter'],
      [{ data: { a: Array.from({ length: 101 }, (_, i) => i) } }, '/filter'],
    ];
    for (const [filter, pointer] of refused) {
      const response = await call(who, 'POST', '/core/v1/webhook-endpoints', {
        url: 'https://hooks.example.com/x',
        eventTypes: ['*'],
        filter,
      });
      expectProblem(response, 400, 'VALIDATION_FAILED');
      assert.equal(
        response.body.errors?.[0]?.pointer,
        pointer,
        `${JSON.stringify(filter).slice(0, 80)}: ${response.text}`,
      );
    }
    const [first] = (await call(who, 'GET', '/core/v1/webhook-endpoints')).body.data;
    assert.equal(first, undefined, 'nothing was created');
  });

  test('a hostile pattern costs what its size allows, and PostgreSQL evaluates it, not the service', async () => {
    // The largest pattern allowed: as many matchers as 4 KiB holds, each a suffix full of metacharacters.
    const matchers = Array.from({ length: 100 }, (_, i) => ({ suffix: `(a+)+$.*${i}` }));
    const pattern = { data: { s: matchers } };
    const compiled = compileFilter(pattern);
    assert.ok(compiled.length < 10 * JSON.stringify(pattern).length, 'the predicate grows with the pattern');
    assert.ok(
      !compiled.includes('**') && !/[^\\]\(a\+\)/.test(compiled),
      'no wildcard path, no tenant regex',
    );
    const who = await service.tenant();
    for (let i = 0; i < 3; i++) await endpoint(who, pattern);
    // Data near the 256 KiB limit, an array the path unwraps: every matcher against every item.
    const data = { s: Array.from({ length: 6500 }, (_, i) => `aaaaaaaaaaaaaaaaaaaaaaaaa!${i}`) };
    // The pattern's work is PostgreSQL's: the queueing statement evaluates the stored predicate, and the
    // service never parses the data to match it (webhooks/filter.ts compiles the pattern once, when set).
    for (let i = 0; i < 2; i++) {
      const published = await call(who, 'POST', '/core/v1/events', { type: 'x.y', data });
      assert.equal(published.status, 202, published.text);
      assert.equal(published.body.deliveries, 0);
    }
    // The stored predicate, matched by PostgreSQL itself: one string ending as a matcher asks, one not.
    const { rows } = await service.db.query<{ hit: boolean; miss: boolean }>(
      `select jsonb_path_match('{"data": {"s": ["x(a+)+$.*7"]}}', filter_path) as hit,
              jsonb_path_match('{"data": {"s": ["aaaa7"]}}', filter_path) as miss
         from webhook_endpoints where project_id = $1 limit 1`,
      [who.projectId],
    );
    assert.deepEqual(rows[0], { hit: true, miss: false });
  });
});
