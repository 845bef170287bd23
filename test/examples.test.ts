// The reference capabilities (examples/notify, examples/ai) run as the processes of their own they are,
// plugged into a real service through HTTP: a project calls each through the gateway with its one key;
// Notify sends through a provider (a real server on loopback) behind its breaker, reported to health;
// AI reserves tokens before its model runs; each answers erasure, Notify pushed, AI by pulling.
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { expectProblem, startService } from './helpers/app.ts';
import { freePort, startExample } from './helpers/examples.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

// The e-mail provider Notify sends through: up or down as the test says.
let providerUp = true;
const provided: string[] = [];
const provider = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => {
    body += chunk;
  });
  request.on('end', () => {
    if (!providerUp) return response.writeHead(503).end();
    provided.push(body);
    response.writeHead(202, { 'content-type': 'application/json' }).end('{"queued":true}');
  });
});
await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
after(() => provider.close());

const service = await startService({
  worker: true,
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100' },
});
const operator = await service.operator();

/** Registers the capability as an operator does, then starts the example with its key and secret. */
async function run(
  name: string,
  env: (capability: { key: string; signingSecret: string }) => Record<string, string>,
) {
  const port = await freePort();
  const upstream = `http://127.0.0.1:${port}`;
  const capability = await service.capability(name, { upstream, erasureUrl: `${upstream}/erasure` });
  await startExample(name, { PLATFORM_URL: service.baseUrl, PORT: String(port), ...env(capability) });
  await service.context.directory.refresh(); // the manifest it put, read at once rather than within 5 s
  return capability;
}

const notifyData = path.join(await mkdtemp(path.join(tmpdir(), 'notify-')), 'notify.db');
await run('notify', (capability) => ({
  NOTIFY_CAPABILITY_KEY: capability.key,
  NOTIFY_SIGNING_SECRETS: capability.signingSecret,
  NOTIFY_PROVIDER_URL: `http://127.0.0.1:${(provider.address() as AddressInfo).port}`,
  NOTIFY_DATA: notifyData,
  NOTIFY_BREAKER_REPORT_MS: '200',
  // Open for 4 s: longer than a report's interval and health's cached read (1 s) together, with room for a
  // loaded machine, so health is sure to read the open breaker before it half-opens.
  NOTIFY_BREAKER_RESET_MS: '4000',
  NOTIFY_INSTANCE: 'notify-1',
}));
const ai = await run('ai', (capability) => ({
  AI_CAPABILITY_KEY: capability.key,
  AI_SIGNING_SECRETS: capability.signingSecret,
  AI_ERASURE_POLL_MS: '200',
}));

const tenant = await service.tenant(['notify:send', 'ai:complete', 'subjects:erase', 'webhooks:write']);
let n = 0;
const call = (method: string, path: string, body?: unknown, key = tenant.key) =>
  service.request(method, path, {
    key,
    body,
    headers: method === 'GET' ? {} : { 'idempotency-key': `examples-${++n}` },
  });
const limit = (metric: string, dailyLimit: number) =>
  service.request('PUT', `/admin/v1/projects/${tenant.projectId}/limits/${metric}`, {
    key: operator.key,
    body: { dailyLimit },
    headers: { 'idempotency-key': `limit-${metric}` },
  });
// The project's limits, set before its first request (a process reads a project's limits anew every 5 s).
assert.equal((await limit('notify/messages_sent', 3)).status, 200);
assert.equal((await limit('ai/tokens', 100)).status, 200);
const health = async () => (await service.request('GET', '/api/health', { key: tenant.key })).body;

describe('the reference capabilities', () => {
  test('Notify through the gateway: sent, published, replayed, read back; its scope and daily limit are Core’s', async () => {
    const hooks = await startReceiver();
    const endpoint = await call('POST', '/core/v1/webhook-endpoints', {
      url: hooks.url,
      eventTypes: ['notify.message.sent'],
    });
    assert.equal(endpoint.status, 201, endpoint.text);

    const message = { to: 'Ada@Example.com', subject: 'Hello', text: 'Hi Ada' };
    const sent = await service.request('POST', '/notify/v1/messages', {
      key: tenant.key,
      body: message,
      headers: { 'idempotency-key': 'first-message' },
    });
    assert.equal(sent.status, 201, sent.text);
    assert.equal(sent.body.status, 'sent');
    const again = await service.request('POST', '/notify/v1/messages', {
      key: tenant.key,
      body: message,
      headers: { 'idempotency-key': 'first-message' },
    });
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, sent.body);
    assert.equal(provided.length, 1, 'a replay never reaches the provider');

    const read = await call('GET', `/notify/v1/messages/${sent.body.id}`);
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.to, 'ada@example.com');

    // The project's endpoint hears of it, signed as every webhook.
    await hooks.waitFor(1);
    const received = hooks.received[0];
    assert.ok(received);
    const event = new Webhook(endpoint.body.secret).verify(
      received.body,
      received.headers as Record<string, string>,
    ) as { type: string; data: { messageId: string } };
    assert.equal(event.type, 'notify.message.sent');
    assert.equal(event.data.messageId, sent.body.id);

    // Core's rules: a key without notify:send, then the day's limit (3).
    const reader = await service.tenant(['ai:complete']);
    expectProblem(await call('POST', '/notify/v1/messages', message, reader.key), 403, 'INSUFFICIENT_SCOPE');
    assert.equal((await call('POST', '/notify/v1/messages', message)).status, 201);
    assert.equal((await call('POST', '/notify/v1/messages', message)).status, 201);
    const over = await call('POST', '/notify/v1/messages', message);
    expectProblem(over, 429, 'USAGE_LIMIT_EXCEEDED');
    assert.equal(provided.length, 3);
    const usage = await service.request('GET', `/admin/v1/projects/${tenant.projectId}/usage`, {
      key: operator.key,
    });
    const counted = usage.body.data.filter((d: { capability: string }) => d.capability === 'notify');
    assert.deepEqual(
      counted.map((d: { metric: string; count: number }) => [d.metric, d.count]),
      [['messages_sent', 3]],
    );
  });

  test('Notify’s provider down: its breaker opens, health is degraded naming notify/mailer, then recovers', async () => {
    await eventually(
      async () => (await health()).breakers.some((b: { state: string }) => b.state === 'closed'),
      10_000,
      'the breaker reported',
    );
    const other = await service.tenant(['notify:send']);
    providerUp = false;
    // Failures until the breaker opens (its rate counts the successes of the last 10 s too).
    for (let i = 0; ; i++) {
      const failed = await call('POST', '/notify/v1/messages', { to: 'grace@example.com' }, other.key);
      assert.equal(failed.status, 503, failed.text);
      if (failed.body.error === 'the provider is unavailable') break;
      assert.ok(i < 20, 'the breaker opens');
    }
    const degraded = await eventually(async () => {
      const body = await health();
      return body.status === 'degraded' && body;
    }, 10_000);
    assert.deepEqual(degraded.breakers, [{ provider: 'notify/mailer', state: 'open' }]);
    assert.deepEqual(degraded.reasons, [
      { code: 'breaker_open', message: 'the circuit breaker of notify/mailer is open' },
    ]);
    providerUp = true;
    await eventually(
      async () =>
        (await call('POST', '/notify/v1/messages', { to: 'grace@example.com' }, other.key)).status === 201,
      10_000,
      'a send once the breaker half-opens',
    );
    await eventually(async () => (await health()).status === 'ok', 10_000, 'health ok again');
  });

  test('AI reserves tokens before its model runs: what it used is counted, past the day is 429', async () => {
    const done = await call('POST', '/ai/v1/completions', {
      prompt: 'one two three',
      maxTokens: 50,
      user: 'u-1',
    });
    assert.equal(done.status, 200, done.text);
    assert.deepEqual(done.body, { text: 'three two one', tokens: 6 });
    const limits = await service.request('GET', `/capability/v1/limits/${tenant.projectId}/tokens`, {
      key: ai.key,
    });
    assert.equal(limits.body.used, 6);
    assert.equal(limits.body.reserved, 0, 'the rest of the reservation was freed');
    const over = await call('POST', '/ai/v1/completions', { prompt: 'four', maxTokens: 95, user: 'u-1' });
    assert.equal(over.status, 429, over.text);
  });

  test('erasure reaches both: Notify pushed (signed), AI by pulling; 200 with each count', async () => {
    const byEmail = await call('POST', '/core/v1/subjects/erase', {
      subject: { type: 'email', value: 'ADA@example.com' },
    });
    assert.equal(byEmail.status, 200, byEmail.text);
    assert.deepEqual(byEmail.body.capabilities, [
      { capability: 'core', erased: 3 }, // the three notify.message.sent events to Ada
      { capability: 'ai', erased: 0 },
      { capability: 'notify', erased: 3 },
    ]);
    const byUser = await call('POST', '/core/v1/subjects/erase', {
      subject: { type: 'external_id', value: 'u-1' },
    });
    assert.equal(byUser.status, 200, byUser.text);
    assert.deepEqual(byUser.body.capabilities, [
      { capability: 'core', erased: 0 },
      { capability: 'ai', erased: 1 },
      { capability: 'notify', erased: 0 },
    ]);
    const state = await call('GET', `/core/v1/erasures/${byUser.body.erasureId}`);
    assert.equal(state.body.state, 'complete');
  });
});
