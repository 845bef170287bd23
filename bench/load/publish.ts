// Publishes `total` events through the API (closed loop: `connections` requests in flight, each sent when
// one is answered). Request n uses key n mod keys (so many projects take turns, as their products would)
// and the type ⌊n / keys⌋ mod types (so each project's endpoints take turns); each has an idempotency key
// of its own. Prints the rate of answers, their p50 and p99, the failed ones, and its own CPU per event.
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { cpuPerOperation } from './summary.ts';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  baseUrl: string;
  keys: string[];
  types: string[];
  total: number;
  connections: number;
  prefix: string;
  data: unknown;
};
const api = new Pool(config.baseUrl, { connections: config.connections });
const data = JSON.stringify(config.data);
const latencies: number[] = [];
let errors = 0;
let next = 0;

async function publisher() {
  for (let n = next++; n < config.total; n = next++) {
    const key = config.keys[n % config.keys.length] as string;
    const type = config.types[Math.floor(n / config.keys.length) % config.types.length] as string;
    const sent = performance.now();
    try {
      const response = await api.request({
        path: '/core/v1/events',
        method: 'POST',
        headers: {
          'x-api-key': key,
          'content-type': 'application/json',
          'idempotency-key': `${config.prefix}-${n}`,
        },
        body: `{"type":${JSON.stringify(type)},"data":${data}}`,
      });
      await response.body.dump();
      if (response.statusCode === 202) latencies.push(performance.now() - sent);
      else errors++;
    } catch {
      errors++;
    }
  }
}

const started = performance.now();
const cpu = process.cpuUsage();
await Promise.all(Array.from({ length: config.connections }, publisher));
const seconds = (performance.now() - started) / 1000;
await api.close();
latencies.sort((a, b) => a - b);
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
console.log(
  JSON.stringify({
    rate: latencies.length / seconds,
    p50: at(0.5),
    p99: at(0.99),
    errors,
    total: config.total,
    cpuUs: cpuPerOperation(cpu, config.total),
  }),
);
