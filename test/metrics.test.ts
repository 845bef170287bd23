// The metrics listener: after known traffic (requests, refusals, idempotent writes, publishes, deliveries
// delivered, failed and dead, a paused endpoint) each metric holds what happened, read through a real
// scrape of the listener; promtool finds no problem in the exposition; and the API's port never serves it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_POOL_SIZE } from '../src/lib/defaults.ts';
import { client } from './helpers/api.ts';
import { expectProblem, startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { promtool, sampleValue, scrape } from './helpers/metrics.ts';
import { startProcess } from './helpers/process.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const service = await startService({
  worker: true,
  env: {
    PLATFORM_METRICS_PORT: '0',
    PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
    PLATFORM_RETRY_SCHEDULE: '0.1',
    PLATFORM_WORKER_POLL_MS: '50',
    PLATFORM_RATE_LIMIT_PER_SECOND: '10',
    PLATFORM_RATE_LIMIT_BURST: '10',
    PLATFORM_DAILY_LIMITS: 'core/events_published=3',
  },
});
const address = service.metricsAddress as string;

/** The value of a sample in a fresh scrape (0 when the series does not exist). */
async function metric(name: string, labels: Record<string, string> = {}) {
  return sampleValue((await scrape(address)).samples, name, labels) ?? 0;
}

describe('metrics', () => {
  test('the listener is its own: GET /metrics there, 404 elsewhere on it, and never on the API port', async () => {
    assert.match(address, /^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await fetch(`${address}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    assert.equal((await fetch(`${address}/`)).status, 404);
    assert.equal((await fetch(`${address}/metrics`, { method: 'POST' })).status, 404);
    expectProblem(await service.request('GET', '/metrics'), 404, 'NOT_FOUND');
  });

  test('requests by route template, method and status; authentication failures by code', async () => {
    const tenant = await service.tenant();
    const readOnly = await service.tenant(['projects:read']);
    const count = { route: '/core/v1/projects/me', method: 'GET', status_code: '200' };
    const before = await metric('platform_http_request_duration_seconds_count', count);
    const unmatched = { route: 'unmatched', status_code: '404' };
    const unmatchedBefore = await metric('platform_http_request_duration_seconds_count', unmatched);
    for (let i = 0; i < 3; i++) await service.request('GET', '/core/v1/projects/me', { key: tenant.key });
    expectProblem(await service.request('GET', '/core/v1/projects/me'), 401, 'API_KEY_MISSING');
    expectProblem(
      await service.request('GET', '/core/v1/projects/me', { key: 'pk_test_nope' }),
      401,
      'API_KEY_INVALID',
    );
    const scope = await service.request('GET', '/core/v1/webhook-endpoints', { key: readOnly.key });
    expectProblem(scope, 403, 'INSUFFICIENT_SCOPE');
    await service.request('GET', '/no/such/path');

    const { samples, text } = await scrape(address);
    assert.equal(sampleValue(samples, 'platform_http_request_duration_seconds_count', count), before + 3);
    const missing = { ...count, status_code: '401' };
    assert.equal(sampleValue(samples, 'platform_http_request_duration_seconds_count', missing), 2);
    assert.equal(
      sampleValue(samples, 'platform_http_request_duration_seconds_count', unmatched),
      unmatchedBefore + 1,
      'every unknown path is one series',
    );
    assert.equal(sampleValue(samples, 'platform_auth_failures_total', { code: 'API_KEY_MISSING' }), 1);
    assert.equal(sampleValue(samples, 'platform_auth_failures_total', { code: 'API_KEY_INVALID' }), 1);
    assert.equal(sampleValue(samples, 'platform_auth_failures_total', { code: 'INSUFFICIENT_SCOPE' }), 1);
    assert.equal(sampleValue(samples, 'platform_auth_failures_total', { code: 'API_KEY_REVOKED' }), 0);
    assert.doesNotMatch(text, /\/no\/such\/path/, 'a raw path never becomes a label');
    assert.doesNotMatch(text, new RegExp(tenant.projectId), 'no label names a project');
  });

  test('idempotent writes by outcome: fresh, replayed, reused', async () => {
    const tenant = await service.tenant();
    const headers = { 'idempotency-key': 'metrics-1' };
    const body = { url: 'https://example.com/hook', eventTypes: ['a.b'] };
    const before = await metric('platform_idempotency_requests_total', { outcome: 'fresh' });
    const post = (b: unknown) =>
      service.request('POST', '/core/v1/webhook-endpoints', { key: tenant.key, headers, body: b });
    assert.equal((await post(body)).status, 201);
    assert.equal((await post(body)).headers.get('idempotent-replayed'), 'true');
    expectProblem(await post({ ...body, eventTypes: ['c.d'] }), 422, 'IDEMPOTENCY_KEY_REUSED');
    const { samples } = await scrape(address);
    assert.equal(
      sampleValue(samples, 'platform_idempotency_requests_total', { outcome: 'fresh' }),
      before + 1,
    );
    assert.equal(sampleValue(samples, 'platform_idempotency_requests_total', { outcome: 'replayed' }), 1);
    assert.equal(sampleValue(samples, 'platform_idempotency_requests_total', { outcome: 'reused' }), 1);
    assert.equal(sampleValue(samples, 'platform_idempotency_requests_total', { outcome: 'in_progress' }), 0);
  });

  test('limit refusals: a key’s rate, and a project’s daily allowance of publishes', async () => {
    const tenant = await service.tenant();
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => service.request('GET', '/core/v1/projects/me', { key: tenant.key })),
    );
    const limited = answers.filter((a) => a.status === 429).length;
    assert.ok(limited >= 15, `30 requests at once against a burst of 10: ${limited} refused`);
    assert.equal(await metric('platform_limit_refusals_total', { limit: 'rate' }), limited);

    await new Promise((resolve) => setTimeout(resolve, 1100)); // the bucket fills again
    const api = client(service, await service.tenant());
    for (let i = 0; i < 3; i++) await api.publish('metrics.daily');
    expectProblem(
      await api.post('/core/v1/events', { type: 'metrics.daily', data: {} }),
      429,
      'USAGE_LIMIT_EXCEEDED',
    );
    assert.equal(await metric('platform_limit_refusals_total', { limit: 'daily' }), 1);
  });

  test('publishes and deliveries: delivered with their lag, failed then dead, attempt durations', async () => {
    const ok = await startReceiver();
    const failing = await startReceiver((_received, _index, response) => response.writeHead(500).end());
    const api = client(service, await service.tenant());
    await api.endpoint(ok.url, ['metrics.ok']);
    await api.endpoint(failing.url, ['metrics.fail']);
    const published = await metric('platform_events_published_total');
    await api.publish('metrics.ok');
    await api.publish('metrics.fail');
    // Two attempts at the failing endpoint (the schedule has one retry), one at the other.
    await eventually(
      async () => (await metric('platform_delivery_attempts_total', { outcome: 'dead' })) === 1,
    );
    const { samples } = await scrape(address);
    assert.equal(sampleValue(samples, 'platform_events_published_total'), published + 2);
    assert.equal(sampleValue(samples, 'platform_delivery_attempts_total', { outcome: 'delivered' }), 1);
    assert.equal(sampleValue(samples, 'platform_delivery_attempts_total', { outcome: 'failed' }), 1);
    assert.equal(sampleValue(samples, 'platform_delivery_lag_seconds_count'), 1);
    const lag = sampleValue(samples, 'platform_delivery_lag_seconds_sum') as number;
    assert.ok(lag > 0 && lag < 10, `the delivery came ${lag} s after its event`);
    const durations = ['delivered', 'failed', 'dead'].map(
      (outcome) =>
        sampleValue(samples, 'platform_delivery_attempt_duration_seconds_count', { outcome }) as number,
    );
    assert.deepEqual(durations, [1, 1, 1]);
    assert.equal(sampleValue(samples, 'platform_delivery_run_length_count'), 3, 'three runs of one');
    assert.equal(ok.received.length, 1);
    assert.equal(failing.received.length, 2);
  });

  test('the queue, the workers, the pool, the process: read at the scrape', async () => {
    const api = client(service, await service.tenant());
    const receiver = await startReceiver();
    const endpoint = await api.endpoint(receiver.url, ['metrics.paused']);
    assert.equal((await api.post(`/core/v1/webhook-endpoints/${endpoint.id}/pause`)).status, 200);
    await api.publish('metrics.paused');
    await api.publish('metrics.paused');
    // The queue is read at most once a second (scrapes within it share the read).
    await eventually(async () => (await metric('platform_queue_deliveries', { state: 'paused' })) === 2);
    const { samples } = await scrape(address);
    for (const state of ['due', 'in_flight', 'scheduled', 'ordered']) {
      assert.equal(typeof sampleValue(samples, 'platform_queue_deliveries', { state }), 'number', state);
    }
    assert.equal(typeof sampleValue(samples, 'platform_queue_oldest_due_age_seconds'), 'number');
    assert.equal(sampleValue(samples, 'platform_workers_reporting'), 1);
    assert.equal(sampleValue(samples, 'platform_database_up'), 1);
    assert.equal(sampleValue(samples, 'platform_worker_concurrency_limit'), 128);
    assert.equal(typeof sampleValue(samples, 'platform_worker_concurrency_in_use'), 'number');
    assert.equal(sampleValue(samples, 'platform_db_pool_max_connections'), DEFAULT_POOL_SIZE);
    assert.ok((sampleValue(samples, 'platform_db_pool_connections') as number) >= 1);
    assert.equal(typeof sampleValue(samples, 'platform_usage_flush_lag_seconds'), 'number');
    assert.equal(sampleValue(samples, 'platform_build_info', { version: service.context.config.version }), 1);
    assert.ok(
      (sampleValue(samples, 'process_resident_memory_bytes') as number) > 0,
      "Node's default metrics",
    );
    assert.equal(
      sampleValue(samples, 'platform_rate_limit_shared_up'),
      undefined,
      'no REDIS_URL: nothing to share',
    );
    assert.equal(receiver.received.length, 0);
  });

  test('promtool check metrics finds no problem in the exposition', async () => {
    const { text } = await scrape(address);
    assert.equal(promtool(['check', 'metrics'], text), '');
  });

  test('a `platform worker` process serves its own: the worker’s figures, no request series', async () => {
    const worker = await startProcess('worker', {
      DATABASE_URL: service.context.config.databaseUrl,
      PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      PLATFORM_METRICS_PORT: '0',
    });
    const own = await worker.waitFor(/platform-core metrics on (http:\/\/\S+)\/metrics/, 10_000);
    assert.notEqual(own, address);
    const { samples, text } = await scrape(own);
    assert.equal(sampleValue(samples, 'platform_worker_concurrency_limit'), 128);
    assert.equal(sampleValue(samples, 'platform_database_up'), 1);
    await eventually(
      async () => sampleValue((await scrape(own)).samples, 'platform_workers_reporting') === 2,
    );
    assert.doesNotMatch(text, /platform_http_request_duration_seconds_count/, 'a worker answers no requests');
    assert.equal(sampleValue(samples, 'platform_rate_limit_shared_up'), undefined);
  });

  test('without PLATFORM_METRICS_PORT there is no listener', async () => {
    const quiet = await startService();
    assert.equal(quiet.metricsAddress, undefined);
    assert.equal(quiet.context.metrics.enabled, false);
  });
});
