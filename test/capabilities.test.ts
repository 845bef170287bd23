// Capabilities plug in (docs/capabilities.md), through HTTP: an operator registers one (its key and signing
// secret shown once) and alone decides where its traffic goes; the capability declares its manifest with
// its own key, under its rules; project keys then hold its scopes, limits bind its metrics, the catalogue
// lists its event types, and it verifies keys and publishes events for projects.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectProblem, startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { runCli } from './helpers/process.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const service = await startService({
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100' },
  worker: true,
});
const operator = await service.operator();
let n = 0;
const idem = () => ({ 'idempotency-key': `cap-${++n}` });
const admin = (method: string, path: string, body?: unknown) =>
  service.request(method, `/admin/v1${path}`, { key: operator.key, body, headers: idem() });
const as = (key: string) => (method: string, path: string, body?: unknown) =>
  service.request(method, path, { key, body, headers: method === 'GET' ? {} : idem() });

const MANIFEST = {
  description: 'Messages to people',
  scopes: [{ name: 'notify:send', description: 'Send messages' }],
  metrics: [{ name: 'messages_sent', description: 'Messages sent', unit: 'message', defaultDailyLimit: 500 }],
  eventTypes: [
    {
      name: 'notify.message.sent',
      description: 'A message went out',
      schema: { type: 'object', properties: { messageId: { type: 'string' } }, required: ['messageId'] },
      example: { messageId: 'msg_1' },
    },
  ],
  providers: [{ name: 'mailer', description: 'The e-mail provider' }],
  erasure: null,
  gateway: null,
};

describe('registering a capability', () => {
  test('POST → 201 with its key and signing secret, once; a name in use → 409; names and URLs are checked', async () => {
    const created = await admin('POST', '/capabilities', {
      name: 'notify',
      description: 'Notifications',
      upstream: 'http://notify.internal:4000/',
    });
    assert.equal(created.status, 201, created.text);
    assert.match(created.body.key, /^pk_cap_[0-9A-Za-z]{32}$/);
    assert.match(created.body.signingSecret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(created.body.upstream, 'http://notify.internal:4000', 'a trailing slash is dropped');
    assert.equal(created.body.manifest, null);
    const read = await admin('GET', '/capabilities/notify');
    assert.equal(read.status, 200);
    assert.equal(read.body.key, undefined, 'the key is shown once');
    assert.equal(read.body.signingSecret, undefined);
    expectProblem(
      await admin('POST', '/capabilities', { name: 'notify', description: 'again' }),
      409,
      'CAPABILITY_NAME_TAKEN',
    );
    for (const body of [
      { name: 'core', description: 'reserved' },
      { name: 'Notify', description: 'uppercase' },
      { name: 'n', description: 'too short' },
      { name: 'mail', description: 'x', upstream: 'ftp://mail.internal' },
      { name: 'mail', description: 'x', erasureUrl: 'http://user:pw@mail.internal' },
    ]) {
      expectProblem(await admin('POST', '/capabilities', body), 400, 'VALIDATION_FAILED');
    }
    const listed = await admin('GET', '/capabilities');
    assert.deepEqual(
      listed.body.data.map((c: { name: string }) => c.name),
      ['notify'],
    );
  });

  test('PATCH: only an operator points it elsewhere; a patch that changes nothing is not audited', async () => {
    const cap = await service.capability('sms', { upstream: 'http://sms.internal:4000' });
    const patched = await admin('PATCH', '/capabilities/sms', {
      erasureUrl: 'http://sms.internal:4000/erase',
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.erasureUrl, 'http://sms.internal:4000/erase');
    assert.equal(
      (await admin('PATCH', '/capabilities/sms', { upstream: 'http://sms.internal:4000' })).status,
      200,
    );
    // The capability's own key cannot: the management API refuses it, and a manifest has no address.
    expectProblem(
      await as(cap.key)('PATCH', '/admin/v1/capabilities/sms', { upstream: 'http://evil.example' }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    const sneaky = await as(cap.key)('PUT', '/capability/v1/manifest', {
      ...MANIFEST,
      upstream: 'http://evil.example',
    });
    expectProblem(sneaky, 400, 'VALIDATION_FAILED');
    const audit = await admin('GET', '/audit?action=capability.updated');
    const entries = audit.body.data.filter((e: { target: { id: string } }) => e.target.id === 'sms');
    assert.deepEqual(
      entries.map((e: { fields: string[] }) => e.fields),
      [['erasureUrl']],
    );
  });

  test('another key works beside the first; an old one is revoked as any key; the signing secret rotates', async () => {
    const cap = await service.capability('pushes');
    const second = await admin('POST', '/capabilities/pushes/keys');
    assert.equal(second.status, 201, second.text);
    assert.match(second.body.key, /^pk_cap_/);
    for (const key of [cap.key, second.body.key]) {
      assert.equal((await as(key)('GET', '/capability/v1/manifest')).status, 200);
    }
    assert.equal((await admin('POST', `/keys/${cap.keyId}/revoke`)).status, 200);
    await eventually(async () => (await as(cap.key)('GET', '/capability/v1/manifest')).status === 401, 8000);
    const rotated = await admin('POST', '/capabilities/pushes/rotate-signing-secret');
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.body.signingSecret, cap.signingSecret);
    assert.equal((await admin('GET', '/capabilities/pushes')).body.hasPreviousSigningSecret, true);
    const retired = await admin('POST', '/capabilities/pushes/retire-previous-signing-secret');
    assert.equal(retired.body.hasPreviousSigningSecret, false);
    const actions = (await admin('GET', '/audit')).body.data
      .filter((e: { target: { id: string } }) => e.target.id === 'pushes')
      .map((e: { action: string }) => e.action);
    assert.deepEqual(actions, [
      'capability.secret_retired',
      'capability.secret_rotated',
      'capability.created',
    ]);
  });

  test('the CLI registers one (key and secret printed once) and lists them', async () => {
    const env = {
      DATABASE_URL: service.context.config.databaseUrl,
      PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    };
    const created = await runCli(
      ['capabilities', 'create', 'billing', '--description', 'Invoices', '--json'],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const body = JSON.parse(created.stdout);
    assert.match(body.key, /^pk_cap_/);
    assert.match(body.signingSecret, /^whsec_/);
    assert.equal((await as(body.key)('GET', '/capability/v1/manifest')).status, 200);
    const listed = await runCli(['capabilities', 'list', '--json'], env);
    assert.ok(JSON.parse(listed.stdout).data.some((c: { name: string }) => c.name === 'billing'));
    const again = await runCli(['capabilities', 'create', 'billing'], env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /exists/);
  });
});

describe('the manifest', () => {
  test('PUT with the capability’s key → 200; its rules refuse names outside its own, undeclared references, missing addresses', async () => {
    const cap = await service.capability('mailer');
    const put = (body: unknown) => as(cap.key)('PUT', '/capability/v1/manifest', body);
    const rename = (manifest: typeof MANIFEST) =>
      JSON.parse(JSON.stringify(manifest).replaceAll('notify', 'mailer'));
    const good = rename(MANIFEST);
    const ok = await put(good);
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.manifest, good);
    const refusals: [unknown, string][] = [
      [{ ...good, scopes: [{ name: 'notify:send', description: 'x' }] }, '/scopes/0/name'],
      [{ ...good, eventTypes: [{ name: 'pay.thing.done', description: 'x' }] }, '/eventTypes/0/name'],
      [{ ...good, metrics: [good.metrics[0], good.metrics[0]] }, '/metrics/1/name'],
      [{ ...good, erasure: { mode: 'push' } }, '/erasure'],
      [
        {
          ...good,
          gateway: { routes: [{ method: 'GET', path: '/v1/x', scope: 'mailer:send', idempotent: false }] },
        },
        '/gateway',
      ],
      [
        { ...good, eventTypes: [{ name: 'mailer.bad', description: 'x', schema: { type: 'nonsense' } }] },
        '/eventTypes/0/schema',
      ],
      [{ ...good, eventTypes: [{ ...good.eventTypes[0], example: { other: 1 } }] }, '/eventTypes/0/example'],
    ];
    for (const [body, pointer] of refusals) {
      const response = await put(body);
      expectProblem(response, 400, 'VALIDATION_FAILED');
      const pointers = (response.body.errors ?? []).map((e: { pointer: string }) => e.pointer);
      assert.ok(
        pointers.some((p: string) => p.startsWith(pointer)),
        `${pointer} in ${JSON.stringify(response.body)}`,
      );
    }
  });

  test('gateway routes: their scope and metric are the manifest’s; paths under /v1/; needs an upstream', async () => {
    const cap = await service.capability('gated', { upstream: 'http://127.0.0.1:9' });
    const base = JSON.parse(JSON.stringify(MANIFEST).replaceAll('notify', 'gated'));
    const route = {
      method: 'POST',
      path: '/v1/messages',
      scope: 'gated:send',
      idempotent: true,
      metric: 'messages_sent',
    };
    const put = (routes: unknown[]) =>
      as(cap.key)('PUT', '/capability/v1/manifest', { ...base, gateway: { routes } });
    assert.equal(
      (await put([route, { ...route, method: 'GET', path: '/v1/messages/{id}', metric: undefined }])).status,
      200,
    );
    for (const bad of [
      { ...route, scope: 'gated:other' },
      { ...route, metric: 'nothing' },
      { ...route, path: '/v2/messages' },
      { ...route, path: '/v1/../admin' },
    ]) {
      expectProblem(await put([bad]), 400, 'VALIDATION_FAILED');
    }
    expectProblem(await put([route, { ...route, path: '/v1/messages' }]), 400, 'VALIDATION_FAILED');
    // The operator takes the upstream away: refused while the manifest has a gateway.
    expectProblem(await admin('PATCH', '/capabilities/gated', { upstream: null }), 400, 'VALIDATION_FAILED');
  });

  test('declared: project keys hold its scopes (by name only), limits bind its metrics, the catalogue lists its types', async () => {
    await service.capability('notifyx', {
      manifest: JSON.parse(JSON.stringify(MANIFEST).replaceAll('notify', 'notifyx')),
    });
    const tenant = await service.tenant();
    const key = await admin('POST', `/projects/${tenant.projectId}/keys`, {
      scopes: ['notifyx:send', 'usage:read'],
    });
    assert.equal(key.status, 201, key.text);
    assert.deepEqual(key.body.scopes, ['notifyx:send', 'usage:read']);
    expectProblem(
      await admin('POST', `/projects/${tenant.projectId}/keys`, { scopes: ['notifyx:fly'] }),
      400,
      'VALIDATION_FAILED',
    );
    const all = await admin('POST', `/projects/${tenant.projectId}/keys`, { scopes: ['all'] });
    assert.ok(
      !all.body.scopes.includes('notifyx:send'),
      'all is Core’s scopes: a capability’s is asked for by name',
    );
    const env = {
      DATABASE_URL: service.context.config.databaseUrl,
      PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    };
    const cli = await runCli(
      ['keys', 'create', '--project', tenant.slug, '--scopes', 'notifyx:send', '--json'],
      env,
    );
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(JSON.parse(cli.stdout).scopes, ['notifyx:send']);

    const limits = await admin('GET', `/projects/${tenant.projectId}/limits`);
    assert.ok(
      limits.body.data.some(
        (l: { capability: string; metric: string; dailyLimit: number; source: string }) =>
          l.capability === 'notifyx' &&
          l.metric === 'messages_sent' &&
          l.dailyLimit === 500 &&
          l.source === 'default',
      ),
      JSON.stringify(limits.body),
    );
    const set = await admin('PUT', `/projects/${tenant.projectId}/limits/notifyx/messages_sent`, {
      dailyLimit: 20,
    });
    assert.equal(set.status, 200, set.text);
    expectProblem(
      await admin('PUT', `/projects/${tenant.projectId}/limits/notifyx/nothing`, { dailyLimit: 1 }),
      400,
      'VALIDATION_FAILED',
    );

    const types = await as(tenant.key)('GET', '/core/v1/event-types');
    const declared = types.body.data.find((t: { name: string }) => t.name === 'notifyx.message.sent');
    assert.equal(declared?.source, 'platform');
    const taken = await as(tenant.key)('PUT', '/core/v1/event-types/notifyx.mine', { description: 'mine' });
    expectProblem(taken, 400, 'VALIDATION_FAILED');
  });
});

describe('keys verified for a capability', () => {
  test('valid with its project and scopes; or why not: missing scopes, revoked (within 5 s), expired, not a project’s', async () => {
    const cap = await service.capability('verifier');
    const verify = (body: unknown) => as(cap.key)('POST', '/capability/v1/keys/verify', body);
    const tenant = await service.tenant(['usage:read', 'projects:read']);
    const ok = await verify({ key: tenant.key, scopes: ['usage:read'] });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, {
      valid: true,
      projectId: tenant.projectId,
      projectSlug: tenant.slug,
      mode: 'test',
      keyId: tenant.keyId,
      scopes: ['projects:read', 'usage:read'],
    });
    assert.deepEqual((await verify({ key: tenant.key, scopes: ['usage:read', 'webhooks:write'] })).body, {
      valid: false,
      code: 'INSUFFICIENT_SCOPE',
      missingScopes: ['webhooks:write'],
    });
    assert.deepEqual((await verify({ key: 'nope' })).body, { valid: false, code: 'API_KEY_INVALID' });
    assert.deepEqual((await verify({ key: operator.key })).body, { valid: false, code: 'API_KEY_INVALID' });
    assert.deepEqual((await verify({ key: cap.key })).body, { valid: false, code: 'API_KEY_INVALID' });
    const expiring = await service.tenant();
    await service.db.query(`update api_keys set expires_at = now() - interval '1 s' where id = $1`, [
      expiring.keyId,
    ]);
    assert.deepEqual((await verify({ key: expiring.key })).body, { valid: false, code: 'API_KEY_EXPIRED' });
    assert.equal((await admin('POST', `/keys/${tenant.keyId}/revoke`)).status, 200);
    const started = Date.now();
    await eventually(async () => (await verify({ key: tenant.key })).body.code === 'API_KEY_REVOKED', 8000);
    assert.ok(Date.now() - started <= 6000, 'a revocation is seen within 5 s');
  });
});

describe('events on a project’s behalf', () => {
  test('a declared type, checked against its schema, delivered to the project’s endpoints, counted and limited', async () => {
    const cap = await service.capability('notifyev', {
      manifest: JSON.parse(JSON.stringify(MANIFEST).replaceAll('notify', 'notifyev')),
    });
    const tenant = await service.tenant();
    const receiver = await startReceiver();
    const endpoint = await as(tenant.key)('POST', '/core/v1/webhook-endpoints', {
      url: receiver.url,
      eventTypes: ['notifyev.*'],
    });
    assert.equal(endpoint.status, 201, endpoint.text);
    const publish = (body: Record<string, unknown>) =>
      as(cap.key)('POST', '/capability/v1/events', { projectId: tenant.projectId, ...body });
    const sent = await publish({ type: 'notifyev.message.sent', data: { messageId: 'm1' } });
    assert.equal(sent.status, 202, sent.text);
    await receiver.waitFor(1);
    assert.equal(JSON.parse(receiver.received[0]?.body ?? '{}').type, 'notifyev.message.sent');
    expectProblem(await publish({ type: 'notifyev.message.sent', data: {} }), 400, 'VALIDATION_FAILED');
    expectProblem(await publish({ type: 'notifyev.other.thing', data: {} }), 400, 'VALIDATION_FAILED');
    expectProblem(await publish({ type: 'pay.payment.succeeded', data: {} }), 400, 'VALIDATION_FAILED');
    const nowhere = await as(cap.key)('POST', '/capability/v1/events', {
      projectId: '00000000-0000-4000-8000-000000000000',
      type: 'notifyev.message.sent',
      data: { messageId: 'm2' },
    });
    expectProblem(nowhere, 404, 'NOT_FOUND');
    // The project's own limit of published events applies.
    await admin('PUT', `/projects/${tenant.projectId}/limits/core/events_published`, { dailyLimit: 1 });
    await new Promise((resolve) => setTimeout(resolve, 5200)); // every process applies a limit within 5 s
    expectProblem(
      await publish({ type: 'notifyev.message.sent', data: { messageId: 'm3' } }),
      429,
      'USAGE_LIMIT_EXCEEDED',
    );
  });
});
