// @platform-core/capability against the running service, as a product would use it: its manifest, keys
// verified (cached, concurrent checks sharing one call, a revocation seen), usage recorded through a
// proxy that loses answers (each record counted once), reservations with withReservation (committed,
// released when the work throws, refused past the limit), and an event published for a project.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Capability, PlatformError } from '../packages/capability/src/index.ts';
import { startService } from './helpers/app.ts';
import { countOf } from './helpers/usage.ts';

const service = await startService({ env: { PLATFORM_RATE_LIMIT_PER_SECOND: '0' } });
const operator = await service.operator();
const registered = await service.capability('mailer');
const MANIFEST = {
  description: 'Mail for projects',
  scopes: [{ name: 'mailer:send', description: 'Send mail' }],
  metrics: [
    { name: 'mails', description: 'Mails sent', defaultDailyLimit: 10 },
    { name: 'bytes', description: 'Bytes sent', unit: 'byte' },
  ],
  eventTypes: [
    {
      name: 'mailer.mail.bounced',
      description: 'A mail came back',
      schema: { type: 'object', required: ['mailId'] },
    },
  ],
  providers: [{ name: 'smtp' }],
  erasure: null,
  gateway: null,
};

/** A fetch that counts the calls to a path, and can lose the answers of the first few (the work done). */
function countingFetch(options: { loseAnswers?: number; path?: string } = {}) {
  const calls = new Map<string, number>();
  let lost = 0;
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const path = new URL(String(input)).pathname;
    calls.set(path, (calls.get(path) ?? 0) + 1);
    const response = await globalThis.fetch(input, init);
    if (path === options.path && lost < (options.loseAnswers ?? 0)) {
      lost++;
      await response.arrayBuffer();
      throw new TypeError('fetch failed: the connection was reset'); // the platform did the work
    }
    return response;
  };
  return { fetch, calls };
}

const sdk = (extra: Partial<ConstructorParameters<typeof Capability>[0]> = {}) =>
  new Capability({ apiKey: registered.key, baseUrl: service.baseUrl, ...extra });

/** A project's count of one of mailer's metrics, as the management API reports it. */
const mailerCount = async (projectId: string, metric: string) => {
  const usage = await service.request('GET', `/admin/v1/projects/${projectId}/usage`, { key: operator.key });
  return countOf(usage.body.data, 'mailer', metric);
};

describe('the capability SDK against the service', () => {
  test('puts and reads its manifest; the platform applies it (a project key can hold its scope)', async () => {
    const capability = sdk();
    const put = await capability.manifest.put(MANIFEST);
    assert.equal(put.name, 'mailer');
    assert.deepEqual((await capability.manifest.get()).manifest?.scopes, MANIFEST.scopes);
    await service.context.directory.refresh();
    const tenant = await service.tenant(['mailer:send']);
    const verified = await capability.verify(tenant.key, ['mailer:send']);
    assert.equal(verified.valid, true);
  });

  test('verify: cached up to 5 s, concurrent checks share one call; a revoked key is refused', async () => {
    const tenant = await service.tenant(['mailer:send']);
    const { fetch, calls } = countingFetch();
    const capability = sdk({ fetch });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => capability.verify(tenant.key, ['mailer:send'])),
    );
    assert.ok(answers.every((a) => a.valid && a.projectId === tenant.projectId));
    assert.equal(calls.get('/capability/v1/keys/verify'), 1, 'one call for twenty checks');
    const missing = await capability.verify(tenant.key, ['mailer:send', 'mailer:admin']);
    assert.deepEqual(missing, { valid: false, code: 'INSUFFICIENT_SCOPE', missingScopes: ['mailer:admin'] });
    assert.deepEqual(await capability.verify('pk_test_nope'), { valid: false, code: 'API_KEY_INVALID' });

    const revoked = await service.request('POST', `/admin/v1/keys/${tenant.keyId}/revoke`, {
      key: operator.key,
      headers: { 'idempotency-key': `sdk-revoke-${tenant.keyId}` },
    });
    assert.equal(revoked.status, 200);
    // Without its own cache, the SDK sees what the platform sees: the revocation within 5 s.
    const uncached = sdk({ verifyCacheMs: 0 });
    const started = Date.now();
    let answer = await uncached.verify(tenant.key);
    while (answer.valid && Date.now() - started < 6000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await uncached.verify(tenant.key);
    }
    assert.deepEqual(answer, { valid: false, code: 'API_KEY_REVOKED' });
    assert.ok(Date.now() - started <= 5500, `seen after ${Date.now() - started} ms`);
  });

  test('the recorder: 2,500 records in batches, answers lost and batches retried, each counted once', async () => {
    const tenant = await service.tenant();
    const { fetch, calls } = countingFetch({ path: '/capability/v1/usage', loseAnswers: 2 });
    const capability = sdk({ fetch });
    const errors: string[] = [];
    const recorder = capability.recorder({
      batchSize: 1000,
      flushIntervalMs: 50,
      onError: (error) => errors.push(error.code),
    });
    for (let i = 0; i < 2500; i++)
      recorder.record({ projectId: tenant.projectId, metric: 'bytes', value: 2 });
    recorder.record({ projectId: tenant.projectId, metric: 'bytes', value: 7, id: 'mail-1' });
    recorder.record({ projectId: tenant.projectId, metric: 'bytes', value: 7, id: 'mail-1' });
    assert.equal(await recorder.close(), 0, 'nothing left behind');
    assert.ok((calls.get('/capability/v1/usage') ?? 0) >= 5, 'three batches, two of them sent again');
    assert.deepEqual(errors, [], 'lost answers are retried by the transport, not reported');
    assert.equal(await mailerCount(tenant.projectId, 'bytes'), 2500 * 2 + 7);
  });

  test('a record the platform refuses is reported, the rest of its batch counted', async () => {
    const tenant = await service.tenant();
    const refused: string[] = [];
    const recorder = sdk().recorder({ onError: (_e, records) => refused.push(...records.map((r) => r.id)) });
    recorder.record({ projectId: tenant.projectId, metric: 'bytes', id: 'good-1' });
    recorder.record({ projectId: tenant.projectId, metric: 'no_such_metric', id: 'bad-1' });
    recorder.record({ projectId: tenant.projectId, metric: 'bytes', id: 'good-2' });
    assert.equal(await recorder.close(), 0);
    assert.deepEqual(refused, ['bad-1']);
    assert.equal(await mailerCount(tenant.projectId, 'bytes'), 2);
  });

  test('withReservation commits what the work used, releases when it throws; past the limit a 429', async () => {
    const tenant = await service.tenant();
    const capability = sdk();
    const input = { projectId: tenant.projectId, metric: 'mails', amount: 4 };
    const result = await capability.withReservation(input, async (reservation) => {
      assert.equal(reservation.remaining, 6);
      return { used: 3, result: 'sent' };
    });
    assert.equal(result, 'sent');
    assert.deepEqual(
      { ...(await capability.limit(tenant.projectId, 'mails')), resetsAt: undefined },
      { dailyLimit: 10, used: 3, reserved: 0, remaining: 7, resetsAt: undefined },
    );
    await assert.rejects(
      capability.withReservation(input, async () => {
        throw new Error('the provider is down');
      }),
      /the provider is down/,
    );
    assert.equal((await capability.limit(tenant.projectId, 'mails')).reserved, 0, 'released');
    const refused = await capability.reserve({ ...input, amount: 8 }).catch((error: unknown) => error);
    assert.ok(refused instanceof PlatformError);
    assert.equal(refused.status, 429);
    assert.equal(refused.code, 'USAGE_LIMIT_EXCEEDED');
    assert.ok((refused.retryAfter ?? 0) > 0);
  });

  test('publish: a declared type for a project, checked against its schema', async () => {
    const tenant = await service.tenant();
    const capability = sdk();
    const published = await capability.publish({
      projectId: tenant.projectId,
      type: 'mailer.mail.bounced',
      data: { mailId: 'm-1' },
    });
    assert.equal(typeof published.eventId, 'string');
    const event = await service.request('GET', `/core/v1/events/${published.eventId}`, { key: tenant.key });
    assert.equal(event.body.type, 'mailer.mail.bounced');
    const invalid = await capability
      .publish({ projectId: tenant.projectId, type: 'mailer.mail.bounced', data: {} })
      .catch((error: unknown) => error);
    assert.ok(invalid instanceof PlatformError);
    assert.equal(invalid.code, 'VALIDATION_FAILED');
  });
});
