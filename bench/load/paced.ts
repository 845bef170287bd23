// Requests at a fixed rate (open loop: each on its schedule, whatever the answers), for `seconds`: their
// latencies from the moment each was due. A write gets a fresh idempotency-key each; `amountOf` bodies
// are sent as they are.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  baseUrl: string;
  path: string;
  method: 'GET' | 'POST';
  key: string;
  body?: unknown;
  rate: number;
  seconds: number;
};
const CONNECTIONS = 64;
const api = new Pool(config.baseUrl, { connections: CONNECTIONS });
const run = randomUUID();
// Connections opened first, untimed: a burst of new ones is the load's own start, not the service's.
await Promise.all(
  Array.from({ length: CONNECTIONS }, () =>
    api.request({ path: '/livez', method: 'GET' }).then((response) => response.body.dump()),
  ),
);
const latencies: number[] = [];
let errors = 0;
const count = config.rate * config.seconds;
const started = performance.now();
const sends: Promise<void>[] = [];
for (let i = 0; i < count; i++) {
  const due = started + (i * 1000) / config.rate;
  const wait = due - performance.now();
  if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
  // From when it was due, or when it went if that was later (a timer fires up to a millisecond early).
  const from = Math.max(due, performance.now());
  const headers: Record<string, string> = { 'x-api-key': config.key };
  if (config.method === 'POST') {
    headers['content-type'] = 'application/json';
    headers['idempotency-key'] = `${run}-${i}`;
  }
  sends.push(
    api
      .request({
        path: config.path,
        method: config.method,
        headers,
        body: config.body === undefined ? undefined : JSON.stringify(config.body),
      })
      .then(async (response) => {
        await response.body.dump();
        if (response.statusCode >= 400) errors++;
        else latencies.push(performance.now() - from);
      })
      .catch(() => {
        errors++;
      }),
  );
}
await Promise.all(sends);
const seconds = (performance.now() - started) / 1000;
await api.close();
const sorted = latencies.sort((a, b) => a - b);
const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;
console.log(
  JSON.stringify({ rate: sorted.length / seconds, p50: at(0.5), p99: at(0.99), errors, total: count }),
);
