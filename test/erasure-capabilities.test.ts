// Erasure across capabilities of their own, through HTTP with real receivers: a pushed capability (its
// request signed as webhooks are, checked here by the independent Standard Webhooks library), a pulling
// one (its tasks read and answered over HTTP), one that is down then back (202, then complete), one that
// never answers (failed after the window, core.erasure.failed to the project's endpoints), one that stops
// asking (skipped). The subject is sealed while a task waits, forgotten after, and never logged.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { expectProblem, startService } from './helpers/app.ts';
import { answerWith, eventually, startReceiver } from './helpers/receiver.ts';

const logs: string[] = [];
const logTo = new PassThrough();
logTo.on('data', (line: Buffer) => logs.push(line.toString()));
const service = await startService({
  worker: true,
  logTo,
  env: {
    PLATFORM_ERASURE_RETRY_SECONDS: '1',
    PLATFORM_ERASURE_WINDOW_SECONDS: '18',
    PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
    PLATFORM_WORKER_POLL_MS: '100',
  },
});
const manifest = (erasure: object | null) => ({
  description: 'Holds people’s data',
  scopes: [],
  metrics: [],
  eventTypes: [],
  providers: [],
  erasure,
  gateway: null,
});

/** A pushed capability: its receiver checks the signature with the Standard Webhooks library, then answers. */
async function pushed(name: string, answer: (n: number) => [number, string]) {
  const receiver = await startReceiver();
  const capability = await service.capability(name, {
    erasureUrl: receiver.url,
    manifest: manifest({ mode: 'push', timeoutSeconds: 2 }),
  });
  const verified: { erasureId: string; projectId: string; subject: { type: string; value: string } }[] = [];
  receiver.answer((received, index, response) => {
    const body = new Webhook(capability.signingSecret).verify(
      received.body,
      received.headers as Record<string, string>,
    ) as (typeof verified)[number];
    verified.push(body);
    const [status, text] = answer(index);
    response.writeHead(status, { 'content-type': 'application/json' }).end(text);
  });
  return { ...capability, receiver, verified };
}

const notify = await pushed('notify', () => [200, '{"erased": 2}']);
const puller = await service.capability('puller', { manifest: manifest({ mode: 'pull' }) });

// The pulling capability's agent: reads its tasks over HTTP and answers each, as a product would.
let pulledAnswers = 0;
const agent = setInterval(() => void answerPulled().catch(() => {}), 100); // (stopped with the service)
after(() => clearInterval(agent));
async function answerPulled() {
  const tasks = await service.request('GET', '/capability/v1/erasure-tasks', { key: puller.key });
  for (const task of tasks.body.data ?? []) {
    const done = await service.request('POST', `/capability/v1/erasure-tasks/${task.id}/complete`, {
      key: puller.key,
      body: { erased: 5 },
      headers: { 'idempotency-key': `complete-${task.id}` },
    });
    if (done.status === 200) pulledAnswers++;
  }
}

const tenant = await service.tenant();
let n = 0;
const erase = (value: string, key = `erase-${++n}`) =>
  service.request('POST', '/core/v1/subjects/erase', {
    key: tenant.key,
    body: { subject: { type: 'email', value } },
    headers: { 'idempotency-key': key },
  });
const erasure = async (id: string) =>
  (await service.request('GET', `/core/v1/erasures/${id}`, { key: tenant.key })).body;

describe('erasure across capabilities', () => {
  test('every capability answers: 200 with each count, Core first; the same key replays the answer', async () => {
    const answer = await erase('Ada@Example.com', 'all-answer');
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.body, {
      erasureId: answer.body.erasureId,
      capabilities: [
        { capability: 'core', erased: 0 },
        { capability: 'notify', erased: 2 },
        { capability: 'puller', erased: 5 },
      ],
    });
    assert.deepEqual(notify.verified.at(-1), {
      erasureId: answer.body.erasureId,
      projectId: tenant.projectId,
      subject: { type: 'email', value: 'ada@example.com' },
    });
    const state = await erasure(answer.body.erasureId);
    assert.equal(state.state, 'complete');
    assert.deepEqual(
      state.capabilities.map((c: { capability: string; state: string }) => `${c.capability}:${c.state}`),
      ['core:complete', 'notify:complete', 'puller:complete'],
    );
    assert.ok(state.completedAt);
    const replay = await erase('Ada@Example.com', 'all-answer');
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, answer.body);
    const { rows } = await service.db.query(
      'select sealed_subject from erasure_tasks where erasure_id = $1',
      [answer.body.erasureId],
    );
    assert.ok(
      rows.every((row) => row.sealed_subject === null),
      'the subject is forgotten once answered',
    );
  });

  test('one down: 202 with it pending, its subject sealed; asked again until it answers, then complete', async () => {
    let up = false;
    const flaky = await pushed('flaky', () => (up ? [200, '{"erased": 1}'] : [503, 'down']));
    const started = Date.now();
    const answer = await erase('grace@example.com');
    assert.equal(answer.status, 202, answer.text);
    assert.ok(Date.now() - started >= 9000, 'it waited for the answers');
    assert.deepEqual(answer.body.pending, ['flaky']);
    assert.deepEqual(
      answer.body.capabilities.map((c: { capability: string }) => c.capability),
      ['core', 'notify', 'puller'],
    );
    const { rows } = await service.db.query(
      `select sealed_subject from erasure_tasks where erasure_id = $1 and capability = 'flaky'`,
      [answer.body.erasureId],
    );
    const sealed = rows[0]?.sealed_subject as Buffer;
    assert.ok(sealed.length > 0 && !sealed.toString('latin1').includes('grace'), 'sealed, not in clear');
    const pending = await erasure(answer.body.erasureId);
    assert.equal(pending.state, 'pending');
    const task = pending.capabilities.find((c: { capability: string }) => c.capability === 'flaky');
    assert.equal(task.state, 'pending');
    assert.match(task.lastError, /HTTP 503/);
    up = true;
    const done = await eventually(async () => {
      const now = await erasure(answer.body.erasureId);
      return now.state === 'complete' && now;
    }, 15_000);
    assert.equal(done.capabilities.find((c: { capability: string }) => c.capability === 'flaky').erased, 1);
    assert.ok(flaky.verified.length >= 2, 'asked again');
    // Nothing of the subject in the service's logs.
    assert.ok(!logs.some((line) => line.includes('grace@example.com') || line.includes('ada@example.com')));
  });

  test('one that never answers fails after the window, and the project hears of it; one that stops asking is skipped', async () => {
    const endpointReceiver = await startReceiver(answerWith(204));
    const created = await service.request('POST', '/core/v1/webhook-endpoints', {
      key: tenant.key,
      body: { url: endpointReceiver.url, eventTypes: ['core.erasure.failed'] },
      headers: { 'idempotency-key': 'erasure-endpoint' },
    });
    assert.equal(created.status, 201, created.text);
    await pushed('silent', () => [500, 'no']);
    await pushed('leaving', () => [500, 'no']);
    const answer = await erase('linus@example.com');
    assert.equal(answer.status, 202);
    // flaky's receiver closed with the test before: it is down again.
    assert.deepEqual(answer.body.pending, ['flaky', 'leaving', 'silent']);
    // leaving stops asking to be told: its task is skipped, never left pending.
    await service.context.db.query(
      `update capabilities set manifest = manifest || '{"erasure": null}' where name = 'leaving'`,
    );
    await service.context.directory.refresh();
    const failed = await eventually(async () => {
      const now = await erasure(answer.body.erasureId);
      return now.state === 'failed' && now;
    }, 30_000);
    const states = Object.fromEntries(
      failed.capabilities.map((c: { capability: string; state: string }) => [c.capability, c.state]),
    );
    assert.equal(states.silent, 'failed');
    assert.equal(states.flaky, 'failed');
    assert.equal(states.leaving, 'skipped');
    // One event for each capability that failed, in no particular order.
    await endpointReceiver.waitFor(2, 20_000);
    const events = endpointReceiver.received
      .map((received) => JSON.parse(received.body))
      .filter((event) => event.data.erasureId === answer.body.erasureId);
    assert.deepEqual(
      events.map((event) => [event.type, event.data.erasureId, event.data.capability]).sort(),
      [
        ['core.erasure.failed', answer.body.erasureId, 'flaky'],
        ['core.erasure.failed', answer.body.erasureId, 'silent'],
      ],
    );
  });

  test('the pull routes: a task of another capability, or none, is 404; a settled one answers as it is', async () => {
    assert.ok(pulledAnswers >= 3);
    const other = await service.capability('bystander', { manifest: manifest(null) });
    const { rows } = await service.db.query(
      `select erasure_id from erasure_tasks where capability = 'puller' limit 1`,
    );
    const id = rows[0]?.erasure_id as string;
    const complete = (key: string, erasureId: string) =>
      service.request('POST', `/capability/v1/erasure-tasks/${erasureId}/complete`, {
        key,
        body: { erased: 1 },
        headers: { 'idempotency-key': `late-${key.slice(-6)}-${erasureId}` },
      });
    expectProblem(await complete(other.key, id), 404, 'NOT_FOUND');
    expectProblem(await complete(puller.key, '00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
    assert.deepEqual((await complete(puller.key, id)).body, { id, state: 'complete' });
    expectProblem(
      await service.request('GET', '/capability/v1/erasure-tasks', { key: tenant.key }),
      403,
      'INSUFFICIENT_SCOPE',
    );
  });
});
