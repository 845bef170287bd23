// Delivery latency, in one process so that both times come from one clock: publishes events at a fixed
// rate (open loop: on schedule, whatever the answers), and receives their deliveries. Latency is the time
// from the publishing call's answer to the delivery's arrival. The receiver runs on a thread of its own
// (arrivals.ts), so that publishing at a high rate does not slow it.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { now, startArrivals } from './arrivals.ts';
import { until } from './schedule.ts';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  baseUrl: string;
  key: string;
  rates: number[];
  seconds: number;
};
const run = randomUUID(); // idempotency keys of this process's requests
const answered = new Map<string, number>();
const receiver = await startArrivals();

const api = new Pool(config.baseUrl, { connections: 128 });
const post = async (path: string, body: unknown, idempotencyKey: string) => {
  const response = await api.request({
    path,
    method: 'POST',
    headers: {
      'x-api-key': config.key,
      'content-type': 'application/json',
      'idempotency-key': idempotencyKey,
    },
    body: JSON.stringify(body),
  });
  return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
};
const created = await post(
  '/core/v1/webhook-endpoints',
  { url: `${receiver.url}/hook`, eventTypes: ['*'] },
  `endpoint-${run}`,
);
if (created.status !== 201) throw new Error(`endpoint: ${created.status}`);

const results = [];
let n = 0;
for (const rate of config.rates) {
  answered.clear();
  await receiver.clear();
  let errors = 0;
  const failures: Record<string, number> = {}; // by status, or by the error's code when none came
  const fail = (what: string) => {
    errors++;
    failures[what] = (failures[what] ?? 0) + 1;
  };
  const count = rate * config.seconds;
  const started = performance.now();
  const sends: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    await until(started + (i * 1000) / rate);
    sends.push(
      post('/core/v1/events', { type: 'pay.payment.succeeded', data: { i } }, `${run}-${n++}`).then(
        (r) => {
          if (r.status === 202) answered.set(r.body.eventId as string, now());
          else fail(String(r.status));
        },
        (error: { code?: string; name?: string }) => fail(error.code ?? error.name ?? 'error'),
      ),
    );
  }
  await Promise.all(sends);
  // The publishing rate the service sustained: every answer in, over the time they took to come.
  const achieved = count / ((performance.now() - started) / 1000);
  const { sorted: latencies, quantile: pick, lost } = await receiver.latencies(answered);
  results.push({
    rate,
    achieved,
    p50: pick(0.5),
    p99: pick(0.99),
    max: latencies.at(-1) ?? 0,
    lost,
    errors,
    failures,
    total: count,
  });
}
// Remove this run's endpoint: its receiver goes away with this process.
await api.request({
  path: `/core/v1/webhook-endpoints/${created.body.id}`,
  method: 'DELETE',
  headers: { 'x-api-key': config.key, 'idempotency-key': `delete-${run}` },
});
await api.close();
await receiver.close();
console.log(JSON.stringify(results));
