// Ordered delivery and the per-endpoint rate, with two `platform worker` processes sharing the work: an
// endpoint ordered as a whole and one ordered by key receive each lane in publish order, with retries,
// one attempt in flight per lane at most, and a worker killed with SIGKILL half-way; a rate of 20/s is
// held by the two workers together.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { client } from './helpers/api.ts';
import { startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { startProcess } from './helpers/process.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const service = await startService({
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_RATE_LIMIT_PER_SECOND: '0' },
});
const databaseUrl = service.context.config.databaseUrl as string;

const worker = () =>
  startProcess('worker', {
    DATABASE_URL: databaseUrl,
    PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
    PLATFORM_DELIVERY_TIMEOUT_MS: '1000',
    PLATFORM_RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2',
    PLATFORM_WORKER_POLL_MS: '100',
    PLATFORM_LOG_LEVEL: 'warn',
  });

/**
 * A receiver that records, per lane, the order in which events first arrive and how many attempts of the
 * lane were in flight at once; it answers 500 to the first attempt of every seventh event.
 */
async function laneReceiver(laneOf: (data: { n: number; key: string }) => string) {
  const firsts = new Map<string, number[]>();
  const seen = new Set<number>();
  const failedOnce = new Set<number>();
  const inFlight = new Map<string, number>();
  let overlaps = 0;
  const receiver = await startReceiver((received, _index, response) => {
    const { data } = JSON.parse(received.body) as { data: { n: number; key: string } };
    const lane = laneOf(data);
    const now = (inFlight.get(lane) ?? 0) + 1;
    inFlight.set(lane, now);
    if (now > 1) overlaps++;
    const fail = data.n % 7 === 0 && !failedOnce.has(data.n);
    if (fail) failedOnce.add(data.n); // the next attempt succeeds
    setTimeout(() => {
      inFlight.set(lane, (inFlight.get(lane) ?? 1) - 1);
      if (!fail && !seen.has(data.n)) {
        seen.add(data.n);
        firsts.set(lane, [...(firsts.get(lane) ?? []), data.n]);
      }
      response.writeHead(fail ? 500 : 204).end();
    }, 2);
  });
  return {
    ...receiver,
    firsts,
    delivered: () => [...firsts.values()].reduce((sum, lane) => sum + lane.length, 0),
    overlaps: () => overlaps,
  };
}

const sorted = (numbers: number[]) => [...numbers].sort((a, b) => a - b);

describe('ordered delivery and rates across workers', () => {
  test('ordered by endpoint and by key: publish order per lane under retries, two workers and a SIGKILL', {
    timeout: 180_000,
  }, async () => {
    const api = client(service, await service.tenant());
    const whole = await laneReceiver(() => 'endpoint');
    const byKey = await laneReceiver((data) => data.key);
    const unordered = await startReceiver();
    await api.endpoint(whole.url, ['pay.*'], { ordering: 'endpoint' });
    await api.endpoint(byKey.url, ['pay.*'], { ordering: 'key' });
    await api.endpoint(unordered.url, ['pay.*']);
    const workers = [await worker(), await worker()];
    const EVENTS = 240;
    for (let n = 0; n < EVENTS; n++)
      await api.publish('pay.thing.happened', { n, key: `k${n % 4}` }, `k${n % 4}`);
    await eventually(async () => whole.delivered() >= EVENTS / 3, 60_000, 'a third delivered');
    await workers[0]?.stop('SIGKILL');
    workers.push(await worker());
    await eventually(
      async () => whole.delivered() === EVENTS && byKey.delivered() === EVENTS,
      60_000,
      'every event to both ordered endpoints',
    ).catch(async (error) => {
      // What is still pending, to see which lane is stuck.
      const { rows } = await service.db.query(
        `select endpoint_id, lane, seq, held, attempts, lease_until > now() as leased from delivery_queue
          order by endpoint_id, lane, seq limit 20`,
      );
      throw new Error(
        `${error.message}: ${whole.delivered()} and ${byKey.delivered()}; ${JSON.stringify(rows)}`,
      );
    });
    await unordered.waitFor(EVENTS);

    assert.deepEqual(whole.firsts.get('endpoint'), [...Array(EVENTS).keys()], 'one lane, in publish order');
    for (let k = 0; k < 4; k++) {
      const lane = byKey.firsts.get(`k${k}`) ?? [];
      assert.equal(lane.length, EVENTS / 4);
      assert.deepEqual(lane, sorted(lane), `lane k${k} in publish order`);
    }
    assert.equal(whole.overlaps(), 0, 'never two attempts of the lane in flight');
    assert.equal(byKey.overlaps(), 0, 'never two attempts of one key in flight');
    // One stuck key does not hold the others: the keys interleave at the receiver.
    assert.ok(byKey.firsts.size === 4);
    for (const w of workers) await w.stop('SIGTERM');
  });

  test('a rate of 20/s is held within 10 % by two workers together', { timeout: 120_000 }, async () => {
    const api = client(service, await service.tenant());
    const receiver = await startReceiver();
    const workers = [await worker(), await worker()];
    // Warm: the workers' first claims and connections are behind them (a fresh process runs slow for a
    // moment, and a late claim sends what it holds at once).
    const warm = await startReceiver();
    await api.endpoint(warm.url, ['billing.*']);
    for (let n = 0; n < 20; n++) await api.publish('billing.warm.up', { n });
    await warm.waitFor(20);
    const { id } = await api.endpoint(receiver.url, ['pay.*'], { rateLimitPerSecond: 20 });
    // Published while paused, so that the receiver (in this process) times arrivals on a quiet event loop.
    await api.post(`/core/v1/webhook-endpoints/${id}/pause`);
    const EVENTS = 100;
    await Promise.all(Array.from({ length: EVENTS }, (_, n) => api.publish('pay.thing.happened', { n })));
    await api.post(`/core/v1/webhook-endpoints/${id}/resume`);
    await receiver.waitFor(EVENTS, 30_000);
    const times = receiver.received.map((r) => r.at).sort((a, b) => a - b);
    const rate = (EVENTS - 1) / (((times.at(-1) as number) - (times[0] as number)) / 1000);
    assert.ok(rate >= 18 && rate <= 22, `held at ${rate.toFixed(1)}/s`);
    // Smooth: no two seconds hold more than 44 of them (10 % over). Two, not one: a worker held off its
    // core for a tenth of a second sends the slots it missed as soon as it runs, a few together (docs/api.md,
    // A rate), which one second's window sees as 23 or 24 on a loaded machine though the rate is held.
    for (const start of times) {
      const inTwo = times.filter((t) => t >= start && t < start + 2000).length;
      assert.ok(inTwo <= 44, `${inTwo} in the two seconds from ${start}`);
    }
    // Every delivery recorded delivered (attempts are recorded a moment after they end).
    await eventually(async () => (await api.history(id)).every((d) => d.state === 'delivered'));
    const attempts = await service.db.query(
      `select count(*)::int as n from delivery_attempts a join deliveries d on d.id = a.delivery_id
        where d.endpoint_id = $1`,
      [id],
    );
    assert.equal(attempts.rows[0]?.n, EVENTS, 'a throttled delivery waits: it is not an attempt');
    for (const w of workers) await w.stop('SIGTERM');
  });
});
