import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Resolver } from '../src/webhooks/address-policy.ts';
import { signingKeys } from '../src/webhooks/secrets.ts';
import { expectProblem, startService, type Tenant } from './helpers/app.ts';

/** Names a test moves inward, or takes out of the DNS, after creating an endpoint on them. */
const movedInward = new Set<string>();
const vanished = new Set<string>();
const resolve: Resolver = async (host) => {
  if (host === 'inward.example.com' || movedInward.has(host)) return ['10.1.2.3'];
  if (vanished.has(host)) throw new Error('ENOTFOUND');
  if (host.endsWith('.example.com')) return ['93.184.216.34'];
  throw new Error('ENOTFOUND');
};
const service = await startService({ resolve });
const tenant = await service.tenant();
let n = 0;
const idem = () => ({ 'idempotency-key': `wh-${++n}` });

const create = (body: unknown, who: Tenant = tenant, headers: Record<string, string> = idem()) =>
  service.request('POST', '/core/v1/webhook-endpoints', { key: who.key, body, headers });
const list = (who: Tenant = tenant) => service.request('GET', '/core/v1/webhook-endpoints', { key: who.key });
const act = (method: string, path: string, who: Tenant = tenant, headers: Record<string, string> = idem()) =>
  service.request(method, path, { key: who.key, headers });
/** The HMAC key a `whsec_` secret stands for (its base64, decoded). */
const secretKey = (secret: string) => Buffer.from(secret.slice('whsec_'.length), 'base64');

/** The HMAC keys that sign for an endpoint now, as the worker unseals them. */
async function secretsOf(who: Tenant, id: string): Promise<Buffer[]> {
  const { rows } = await service.db.query(
    'select active_secret, previous_secret from webhook_endpoints where project_id = $1 and id = $2',
    [who.projectId, id],
  );
  const row = rows[0];
  return row ? signingKeys(service.context.keyring, id, row.active_secret, row.previous_secret) : [];
}
const valid = {
  url: 'https://hooks.example.com/platform',
  eventTypes: ['pay.payment.succeeded', 'billing.invoice.paid'],
};

describe('webhook endpoints', () => {
  test('PATCH url → the address policy of a create: 400 WEBHOOK_URL_NOT_ALLOWED, the endpoint unchanged', async () => {
    const { id } = (await create(valid)).body;
    const patch = (url: string) =>
      service.request('PATCH', `/core/v1/webhook-endpoints/${id}`, {
        key: tenant.key,
        body: { url },
        headers: idem(),
      });
    for (const url of ['http://hooks.example.com/', 'https://127.0.0.1/', 'https://inward.example.com/']) {
      expectProblem(await patch(url), 400, 'WEBHOOK_URL_NOT_ALLOWED');
    }
    const after = await service.request('GET', `/core/v1/webhook-endpoints/${id}`, { key: tenant.key });
    assert.equal(after.body.url, valid.url);
  });

  test('POST → 201 WebhookEndpointCreated with the secret in clear this one time', async () => {
    const response = await create(valid);
    assert.equal(response.status, 201, response.text);
    const { id, secret, createdAt, ...rest } = response.body;
    assert.match(id, /^[0-9a-f-]{36}$/);
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(secretKey(secret).length, 32);
    assert.ok(Math.abs(Date.parse(createdAt) - Date.now()) < 60_000);
    assert.deepEqual(rest, {
      url: valid.url,
      eventTypes: valid.eventTypes,
      active: true,
      paused: false,
      rateLimitPerSecond: null,
      ordering: 'none',
      waiting: 0,
      hasPreviousSecret: false,
      name: null,
      description: null,
      metadata: {},
      headers: {},
      filter: null,
      auth: null,
      tls: null,
      // Neither type is in the project's catalogue: allowed, and reported.
      unknownEventTypes: valid.eventTypes,
    });
    assert.deepEqual(await secretsOf(tenant, id), [secretKey(secret)]);
  });

  test('body validation → 400 VALIDATION_FAILED', async () => {
    const bad: unknown[] = [
      {},
      { url: valid.url },
      { eventTypes: ['*'] },
      { url: 42, eventTypes: ['*'] },
      { url: 'not a url', eventTypes: ['*'] },
      { url: valid.url, eventTypes: [] },
      { url: valid.url, eventTypes: 'pay.payment.succeeded' },
      { url: valid.url, eventTypes: ['pay.x', 'pay.x'] },
      { url: valid.url, eventTypes: ['Pay.Payment'] },
      { url: valid.url, eventTypes: ['single'] },
      { url: valid.url, eventTypes: ['pay..x'] },
      { url: valid.url, eventTypes: [`a.${'b'.repeat(127)}`] },
      { url: valid.url, eventTypes: Array.from({ length: 51 }, (_, i) => `pay.t${i}`) },
      { url: valid.url, eventTypes: ['*'], secret: 'mine' },
      { url: `https://hooks.example.com/${'a'.repeat(2048)}`, eventTypes: ['*'] },
    ];
    for (const body of bad) expectProblem(await create(body), 400, 'VALIDATION_FAILED');
    assert.equal(
      (await create({ url: valid.url, eventTypes: Array.from({ length: 50 }, (_, i) => `pay.t${i}`) }))
        .status,
      201,
    );
    assert.equal((await create({ url: valid.url, eventTypes: ['*'] })).status, 201);
  });

  test('not a public HTTPS address → 400 WEBHOOK_URL_NOT_ALLOWED with the reason', async () => {
    for (const [url, reason] of [
      ['http://hooks.example.com/', /scheme/],
      ['https://127.0.0.1/', /loopback/],
      ['https://2130706433/', /loopback/],
      ['https://[::ffff:10.0.0.1]/', /private/],
      ['https://inward.example.com/', /resolves to 10\.1\.2\.3/],
      ['https://localhost/', /loopback/],
      ['https://u:p@hooks.example.com/', /password/],
    ] as const) {
      const response = await create({ url, eventTypes: ['*'] });
      expectProblem(response, 400, 'WEBHOOK_URL_NOT_ALLOWED');
      assert.match(response.body.detail, reason, url);
      assert.equal(response.body.errors[0].pointer, '/url');
    }
  });

  test('the 21st endpoint → 400 WEBHOOK_ENDPOINT_LIMIT_REACHED, decided safely under concurrency', async () => {
    const project = await service.tenant();
    for (let i = 0; i < 19; i++) assert.equal((await create(valid, project)).status, 201);
    const racing = await Promise.all(Array.from({ length: 20 }, () => create(valid, project)));
    assert.equal(racing.filter((r) => r.status === 201).length, 1, racing.map((r) => r.status).join(','));
    for (const refused of racing.filter((r) => r.status !== 201))
      expectProblem(refused, 400, 'WEBHOOK_ENDPOINT_LIMIT_REACHED');
    assert.equal((await list(project)).body.data.length, 20);
    expectProblem(await create(valid, project), 400, 'WEBHOOK_ENDPOINT_LIMIT_REACHED');
  });

  test('GET → 200 WebhookEndpointList, oldest first, never a secret, only the project’s own', async () => {
    const project = await service.tenant();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await create({ url: `https://h${i}.example.com/`, eventTypes: ['*'] }, project)).body.id);
    const response = await list(project);
    assert.equal(response.status, 200);
    assert.deepEqual(
      response.body.data.map((e: { id: string }) => e.id),
      ids,
    );
    assert.ok(!response.text.includes('whsec_') && !/secret"/.test(response.text));
    for (const endpoint of response.body.data) {
      assert.deepEqual(Object.keys(endpoint).sort(), [
        'active',
        'auth',
        'createdAt',
        'description',
        'eventTypes',
        'filter',
        'hasPreviousSecret',
        'headers',
        'id',
        'last24h',
        'metadata',
        'name',
        'ordering',
        'paused',
        'rateLimitPerSecond',
        'tls',
        'url',
        'waiting',
      ]);
    }
    const reader = await service.tenant(['webhooks:read']);
    assert.deepEqual((await list(reader)).body, { data: [] });
  });

  test('DELETE → 204, gone afterwards; 404 for unknown, another project’s, and non-UUID ids', async () => {
    const { id } = (await create(valid)).body;
    const headers = idem();
    const deleted = await act('DELETE', `/core/v1/webhook-endpoints/${id}`, tenant, headers);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    const replay = await act('DELETE', `/core/v1/webhook-endpoints/${id}`, tenant, headers);
    assert.equal(replay.status, 204);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.ok(!(await list()).body.data.some((e: { id: string }) => e.id === id));
    assert.deepEqual(await secretsOf(tenant, id), []);
    expectProblem(await act('DELETE', `/core/v1/webhook-endpoints/${id}`), 404, 'NOT_FOUND');
    expectProblem(await act('DELETE', `/core/v1/webhook-endpoints/${randomUUID()}`), 404, 'NOT_FOUND');
    expectProblem(await act('DELETE', '/core/v1/webhook-endpoints/not-a-uuid'), 404, 'NOT_FOUND');
    const other = await service.tenant();
    const theirs = (await create(valid, other)).body.id;
    expectProblem(await act('DELETE', `/core/v1/webhook-endpoints/${theirs}`), 404, 'NOT_FOUND');
    assert.equal((await list(other)).body.data.length, 1, 'another project’s endpoint is untouched');
  });

  test('rotate → retire: the secret state machine, and hasPreviousSecret tells the truth', async () => {
    const created = (await create(valid)).body;
    const path = `/core/v1/webhook-endpoints/${created.id}`;
    const record = async () => (await list()).body.data.find((e: { id: string }) => e.id === created.id);

    const rotated = await act('POST', `${path}/rotate-secret`);
    assert.equal(rotated.status, 200, rotated.text);
    assert.deepEqual(Object.keys(rotated.body).sort(), ['id', 'secret']);
    assert.equal(rotated.body.id, created.id);
    assert.notEqual(rotated.body.secret, created.secret);
    assert.equal((await record()).hasPreviousSecret, true);
    assert.deepEqual(await secretsOf(tenant, created.id), [
      secretKey(rotated.body.secret),
      secretKey(created.secret),
    ]);

    // rotating during a rotation: the active becomes previous, the older previous is dropped
    const again = await act('POST', `${path}/rotate-secret`);
    assert.deepEqual(await secretsOf(tenant, created.id), [
      secretKey(again.body.secret),
      secretKey(rotated.body.secret),
    ]);

    const retired = await act('POST', `${path}/retire-previous-secret`);
    assert.equal(retired.status, 200);
    assert.equal(retired.body.hasPreviousSecret, false);
    assert.equal(retired.body.id, created.id);
    assert.ok(!('secret' in retired.body));
    assert.deepEqual(await secretsOf(tenant, created.id), [secretKey(again.body.secret)]);

    // nothing to retire: 200 and nothing changes
    const nothing = await act('POST', `${path}/retire-previous-secret`);
    assert.equal(nothing.status, 200);
    assert.deepEqual(nothing.body, retired.body);
    assert.deepEqual(await secretsOf(tenant, created.id), [secretKey(again.body.secret)]);
  });

  test('rotate and retire: 404 for unknown, another project’s and non-UUID ids; content-type json with no body is fine', async () => {
    const other = await service.tenant();
    const theirs = (await create(valid, other)).body.id;
    for (const action of ['rotate-secret', 'retire-previous-secret']) {
      for (const id of [randomUUID(), theirs, 'nope']) {
        expectProblem(await act('POST', `/core/v1/webhook-endpoints/${id}/${action}`), 404, 'NOT_FOUND');
      }
    }
    assert.deepEqual((await secretsOf(other, theirs)).length, 1, 'their endpoint was not rotated');
    const mine = (await create(valid)).body.id;
    const withHeader = await service.request('POST', `/core/v1/webhook-endpoints/${mine}/rotate-secret`, {
      key: tenant.key,
      rawBody: '',
      headers: { ...idem(), 'content-type': 'application/json' },
    });
    assert.equal(withHeader.status, 200, withHeader.text);
  });

  test('idempotent replays: the same endpoint and secret, no second effect', async () => {
    const headers = idem();
    const first = await create(valid, tenant, headers);
    const again = await create(valid, tenant, headers);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);
    const count = (await list()).body.data.filter((e: { id: string }) => e.id === first.body.id).length;
    assert.equal(count, 1);

    const rotateHeaders = idem();
    const path = `/core/v1/webhook-endpoints/${first.body.id}`;
    const rotation = await act('POST', `${path}/rotate-secret`, tenant, rotateHeaders);
    const rotationAgain = await act('POST', `${path}/rotate-secret`, tenant, rotateHeaders);
    assert.equal(rotationAgain.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(rotationAgain.body, rotation.body);
    assert.deepEqual(await secretsOf(tenant, first.body.id), [
      secretKey(rotation.body.secret),
      secretKey(first.body.secret),
    ]);

    const retireHeaders = idem();
    await act('POST', `${path}/retire-previous-secret`, tenant, retireHeaders);
    const retireAgain = await act('POST', `${path}/retire-previous-secret`, tenant, retireHeaders);
    assert.equal(retireAgain.headers.get('idempotent-replayed'), 'true');
    expectProblem(
      await act('POST', `${path}/rotate-secret`, tenant, retireHeaders),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
  });

  test('a recorded create is replayed, secret and all, after its host name moves inward or stops resolving', async () => {
    for (const [host, move] of [
      ['moving.example.com', () => movedInward.add('moving.example.com')],
      ['vanishing.example.com', () => vanished.add('vanishing.example.com')],
    ] as const) {
      const headers = idem();
      const body = { url: `https://${host}/hook`, eventTypes: ['*'] };
      const first = await create(body, tenant, headers);
      assert.equal(first.status, 201, first.text);
      move();
      const again = await create(body, tenant, headers);
      assert.equal(again.status, 201, again.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(again.body, first.body);
      // a new request to the same address is refused now
      expectProblem(await create(body), 400, 'WEBHOOK_URL_NOT_ALLOWED');
    }
  });

  test('the database holds no secret in clear, and each sealed secret names its master key', async () => {
    const created = (await create(valid)).body;
    const rotated = (await act('POST', `/core/v1/webhook-endpoints/${created.id}/rotate-secret`)).body;
    const needles = [created.secret, rotated.secret].flatMap((secret: string) => {
      const raw = secretKey(secret);
      // bytea prints as hex: look for the hex of the secret's text too, not only for the text
      return [
        secret,
        secret.slice(6),
        raw.toString('hex'),
        raw.toString('base64url'),
        Buffer.from(secret.slice(6)).toString('hex'),
      ];
    });
    const { rows: tables } = await service.db.query(
      `select tablename from pg_tables where schemaname = 'public'`,
    );
    for (const { tablename } of tables) {
      const { rows } = await service.db.query(
        `select t::text as row, encode(convert_to(t::text, 'UTF8'), 'hex') as hex from ${tablename} t`,
      );
      for (const row of rows) {
        for (const needle of needles) {
          assert.ok(
            !row.row.includes(needle) && !row.hex.includes(needle),
            `${tablename} holds a secret in clear`,
          );
        }
      }
    }
    const { rows } = await service.db.query(
      'select active_secret, previous_secret from webhook_endpoints where id = $1',
      [created.id],
    );
    for (const sealed of [rows[0]!.active_secret, rows[0]!.previous_secret] as Buffer[]) {
      assert.equal(sealed.subarray(1, 5).toString('hex'), service.context.keyring.primary.id);
    }
  });
});
