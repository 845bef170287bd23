// Request rate limits shared across API processes through Redis: two `platform serve` processes on the
// machine's Redis give a key its rate together (within 10 %), not twice it; and when Redis stops, a
// process keeps answering, limits alone, says so in a metric and its log, and shares again once Redis is back.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { freePort, spawnProgram } from '../support/process.ts';
import { startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { sampleValue, scrape } from './helpers/metrics.ts';
import { type ServiceProcess, startProcess } from './helpers/process.ts';
import { eventually } from './helpers/receiver.ts';

const RATE = 50;
const BURST = 50;
const service = await startService();
const serve = (redisUrl: string, extra: Record<string, string> = {}) =>
  startProcess('serve', {
    DATABASE_URL: service.context.config.databaseUrl,
    PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    REDIS_URL: redisUrl,
    PLATFORM_RATE_LIMIT_PER_SECOND: String(RATE),
    PLATFORM_RATE_LIMIT_BURST: String(BURST),
    ...extra,
  });

/** Requests with the key as fast as `parallel` loops per process allow, for ms; the answers' statuses. */
async function hammer(processes: ServiceProcess[], key: string, ms: number, parallel = 4) {
  const statuses: number[] = [];
  const started = Date.now();
  const loop = async (baseUrl: string) => {
    while (Date.now() - started < ms) {
      const response = await fetch(`${baseUrl}/core/v1/projects/me`, { headers: { 'x-api-key': key } });
      await response.arrayBuffer();
      statuses.push(response.status);
    }
  };
  await Promise.all(processes.flatMap((p) => Array.from({ length: parallel }, () => loop(p.baseUrl))));
  return { statuses, seconds: (Date.now() - started) / 1000 };
}

describe('request rate limits shared through Redis', () => {
  test('two API processes on one Redis: a key’s combined rate stays within 10 % of its limit', {
    timeout: 60_000,
  }, async () => {
    const processes = [await serve('redis://127.0.0.1:6379'), await serve('redis://127.0.0.1:6379')];
    for (const p of processes) await p.waitFor(/request rate limits are shared/, 10_000);
    const tenant = await service.tenant();
    const { statuses, seconds } = await hammer(processes, tenant.key, 4000);
    const admitted = statuses.filter((s) => s === 200).length;
    const refused = statuses.filter((s) => s === 429).length;
    assert.equal(admitted + refused, statuses.length, 'every answer is a 200 or a 429');
    // A full bucket, then the rate: what one process alone would admit.
    const allowed = BURST + RATE * seconds;
    const off = Math.abs(admitted - allowed) / allowed;
    assert.ok(
      off <= 0.1,
      `${admitted} admitted in ${seconds} s against ${allowed.toFixed(0)} allowed (${refused} refused)`,
    );
    assert.ok(refused > admitted, `the processes were asked for more than the limit (${statuses.length})`);
  });

  test('Redis stopped: answers go on, limited by each process alone, with a metric and a log line; shared again when it is back', {
    timeout: 60_000,
  }, async () => {
    const port = await freePort();
    const startRedis = async () => {
      const redis = spawnProgram(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { PATH: process.env.PATH },
      );
      after(() => redis.stop('SIGKILL'));
      await redis.waitFor(/Ready to accept connections/, 10_000);
      return redis;
    };
    const redis = await startRedis();
    const api = await serve(`redis://127.0.0.1:${port}`, { PLATFORM_METRICS_PORT: '0' });
    const metrics = await api.waitFor(/platform-core metrics on (http:\/\/\S+)\/metrics/, 10_000);
    const metric = async (name: string) => sampleValue((await scrape(metrics)).samples, name);
    await eventually(async () => (await metric('platform_rate_limit_shared_up')) === 1);
    const tenant = await service.tenant();
    const me = () => fetch(`${api.baseUrl}/core/v1/projects/me`, { headers: { 'x-api-key': tenant.key } });
    assert.equal((await me()).status, 200);
    assert.equal(await metric('platform_rate_limit_fallbacks_total'), 0);

    await redis.stop('SIGKILL');
    await api.waitFor(/Redis does not answer: each process limits request rates alone/, 10_000);
    assert.equal(await metric('platform_rate_limit_shared_up'), 0);
    for (let i = 0; i < 5; i++) assert.equal((await me()).status, 200, 'the service keeps answering');
    assert.ok(((await metric('platform_rate_limit_fallbacks_total')) as number) >= 5);
    // Still limited: by the process's own buckets.
    const burst = await Promise.all(Array.from({ length: BURST + 30 }, () => me()));
    assert.ok(burst.filter((r) => r.status === 429).length >= 20, 'the local buckets refuse past the burst');

    await startRedis();
    const said = (line: RegExp) =>
      api
        .output()
        .split('\n')
        .filter((l) => line.test(l)).length;
    await eventually(
      async () => said(/Redis answers: request rate limits are shared/) === 2,
      15_000,
      'the log line',
    );
    await eventually(async () => (await metric('platform_rate_limit_shared_up')) === 1);
    const fallbacks = await metric('platform_rate_limit_fallbacks_total');
    await new Promise((resolve) => setTimeout(resolve, 1000)); // a token again
    assert.equal((await me()).status, 200);
    assert.equal(await metric('platform_rate_limit_fallbacks_total'), fallbacks, 'decided by Redis again');
  });
});
