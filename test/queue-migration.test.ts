// The queue's migration (0020): a database of the previous version, with deliveries pending (due, leased,
// held for a pause, waiting in an ordered lane, scheduled for a retry), dead and delivered, is migrated,
// and a worker of this version then sends each one that was to be sent exactly once, in its lane's order,
// holds the paused one until its endpoint is resumed, and leaves the finished ones alone.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { stateOf } from '../src/delivery-store/state.ts';
import { SCOPES } from '../src/keys/scopes.ts';
import { generateKey, hashKey } from '../src/keys/service.ts';
import { parseKeyring } from '../src/lib/crypto.ts';
import { newSecret } from '../src/webhooks/secrets.ts';
import { startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { freshDatabase } from './helpers/database.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const BEFORE = '0019_capability_erasure_and_breakers';

/** The deliveries of the old shape: name → [endpoint, state, and the queue's columns as they were]. */
const DELIVERIES = {
  due: ['plain', `'pending', 0, now(), null, null, null, null`],
  leased: ['plain', `'pending', 0, now(), now() + interval '3 seconds', gen_random_uuid(), null, null`],
  paused: ['paused', `'pending', 0, now(), null, null, 'paused', null`],
  head: ['ordered', `'pending', 0, now(), null, null, null, ''`],
  follower: ['ordered', `'pending', 0, now(), null, null, 'ordered', ''`],
  retry: ['plain', `'pending', 2, now() + interval '1 hour', null, null, null, null`],
  dead: ['plain', `'dead', 6, now(), null, null, null, null`],
  delivered: ['plain', `'delivered', 1, now(), null, null, null, null`],
} as const;

test('a database with pending, leased, held and dead deliveries migrates, and each is sent once or left as it was', async () => {
  const url = await freshDatabase();
  const db = openDatabase(url);
  const receivers = {
    plain: await startReceiver(),
    paused: await startReceiver(),
    ordered: await startReceiver(),
  };
  const projectId = randomUUID();
  const key = generateKey('test');
  const endpoints = { plain: randomUUID(), paused: randomUUID(), ordered: randomUUID() };
  const ids: Record<string, string> = {};
  try {
    await migrate(db, BEFORE);
    await db.query(
      `with p as (insert into projects (id, slug, name, mode, webhook_endpoints) values ($1, $2, 'Migrated', 'test', 3))
       insert into api_keys (project_id, key_hash, display_prefix, scopes) values ($1, $3, 'pk_test_mig', $4)`,
      [projectId, `migrated-${Date.now()}`, hashKey(key), [...SCOPES]],
    );
    const keyring = parseKeyring(TEST_ENCRYPTION_KEY);
    for (const [name, id] of Object.entries(endpoints)) {
      await db.query(
        `insert into webhook_endpoints (project_id, id, url, event_types, active_secret, created_at, paused, ordering)
         values ($1, $2, $3, '{*}', $4, now(), $5, $6)`,
        [
          projectId,
          id,
          receivers[name as keyof typeof receivers].url,
          newSecret(keyring, id).sealed,
          name === 'paused',
          name === 'ordered' ? 'endpoint' : 'none',
        ],
      );
    }
    // In this order, so that the lane's head has the lower seq.
    for (const [name, [endpoint, columns]] of Object.entries(DELIVERIES)) {
      const { rows } = await db.query<{ id: string }>(
        `with e as (
           insert into events (project_id, id, type, data, created_at)
           select $1, uuid_v7_at(t), 'pay.migrated.thing', json_build_object('name', $3::text), t
             from date_trunc('milliseconds', now()) as t
           returning id, created_at
         )
         insert into deliveries (project_id, id, event_id, event_created_at, endpoint_id, kind, state, attempts,
                                 next_attempt_at, lease_until, lease_token, held, lane, created_at, seq,
                                 dead_at, delivered_at)
         select $1, uuid_v7_at(e.created_at), e.id, e.created_at, $2, 'dispatch', ${columns}, now(),
                nextval('delivery_seq'), case when $3 = 'dead' then now() end,
                case when $3 = 'delivered' then now() end
           from e
         returning id`,
        [projectId, endpoints[endpoint], name],
      );
      ids[name] = rows[0]?.id as string;
    }

    assert.ok((await migrate(db)).includes('0020_delivery_queue'));
    const { rows: queued } = await db.query(
      `select delivery_id, attempts, held, lane, lease_until is not null as leased,
              next_attempt_at > now() + interval '30 minutes' as later
         from delivery_queue order by seq`,
    );
    const named = (id: string) => Object.keys(ids).find((name) => ids[name] === id);
    assert.deepEqual(
      queued.map((q) => ({ ...q, delivery_id: named(q.delivery_id) })),
      [
        { delivery_id: 'due', attempts: 0, held: null, lane: null, leased: false, later: false },
        { delivery_id: 'leased', attempts: 0, held: null, lane: null, leased: true, later: false },
        { delivery_id: 'paused', attempts: 0, held: 'paused', lane: null, leased: false, later: false },
        { delivery_id: 'head', attempts: 0, held: null, lane: '', leased: false, later: false },
        { delivery_id: 'follower', attempts: 0, held: 'ordered', lane: '', leased: false, later: false },
        { delivery_id: 'retry', attempts: 2, held: null, lane: null, leased: false, later: true },
      ],
      'every pending delivery, and only they, in the queue as it was',
    );
  } finally {
    await db.close();
  }

  const service = await startService({
    databaseUrl: url,
    worker: true,
    env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1' },
  });
  const nameOf = (body: string) => (JSON.parse(body) as { data: { name: string } }).data.name;
  const names = (receiver: { received: { body: string }[] }) => receiver.received.map((r) => nameOf(r.body));
  // The leased one waits for its lease to end (its worker may still be sending it), then goes.
  await receivers.plain.waitFor(2);
  await receivers.ordered.waitFor(2);
  assert.deepEqual(names(receivers.plain).sort(), ['due', 'leased']);
  assert.deepEqual(names(receivers.ordered), ['head', 'follower'], 'the lane in its order');
  assert.deepEqual(names(receivers.paused), [], 'held while its endpoint is paused');

  const request = (method: string, path: string) =>
    service.request(method, path, { key, headers: { 'idempotency-key': randomUUID() } });
  // Once the two sent are recorded (the recorder writes a batch a few ms after its attempts end).
  const pending = await eventually(async () => {
    const page = await request(
      'GET',
      `/core/v1/webhook-endpoints/${endpoints.plain}/deliveries?state=pending`,
    );
    return page.body.data?.length === 1 && page;
  });
  assert.equal(pending.status, 200, pending.text);
  assert.deepEqual(
    pending.body.data.map((d: { id: string; attemptCount: number; waitReason: string }) => [
      d.id,
      d.attemptCount,
      d.waitReason,
    ]),
    [[ids.retry, 2, 'retry']],
    'the retry waits for its time, with its attempts',
  );
  assert.ok(Date.parse(pending.body.data[0].nextAttemptAt) > Date.now() + 30 * 60_000);

  assert.equal((await request('POST', `/core/v1/webhook-endpoints/${endpoints.paused}/resume`)).status, 200);
  await receivers.paused.waitFor(1);
  assert.equal((await request('POST', `/core/v1/deliveries/${ids.dead}/retry`)).status, 202);
  await receivers.plain.waitFor(3);
  await eventually(async () => {
    const { rows } = await service.db.query<{ state: string }>(
      `select from deliveries d where id = any ($1::uuid[]) and ${stateOf('d')} = 'delivered'`,
      [[ids.due, ids.leased, ids.paused, ids.head, ids.follower, ids.dead, ids.delivered]],
    );
    return rows.length === 7;
  });
  await new Promise((resolve) => setTimeout(resolve, 500)); // anything sent twice would have arrived by now
  assert.deepEqual(names(receivers.plain).sort(), ['dead', 'due', 'leased'], 'each sent once');
  assert.deepEqual(names(receivers.paused), ['paused']);
  assert.deepEqual(names(receivers.ordered), ['head', 'follower']);
});
