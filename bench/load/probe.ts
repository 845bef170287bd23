// Latency probes, in a process of their own: each named request is sent `count` times one after another
// (one connection, keep-alive), and its p50 and p99 are measured to the microsecond (autocannon reports
// whole milliseconds, too coarse for requests of one or two). Config (JSON in argv[2]): baseUrl, key,
// count, probes: [{name, method?, paths (cycled), body?}]; a probe with a body gets a fresh idempotency-key
// per request. Prints one JSON line: {name: {p50, p99, errors, total}}.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';

interface Probe {
  name: string;
  method?: 'GET' | 'POST';
  paths: string[];
  body?: string;
}

interface Config {
  baseUrl: string;
  key: string;
  count: number;
  probes: Probe[];
}

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as Config;
const dispatcher = new Agent({ connections: 1 });
const run = `${process.pid}-${Date.now()}`;
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

const results: Record<string, { p50: number; p99: number; errors: number; total: number }> = {};
for (const probe of config.probes) {
  const times: number[] = [];
  let errors = 0;
  for (let i = 0; i < config.count; i++) {
    const headers: Record<string, string> = { 'x-api-key': config.key };
    if (probe.body) {
      headers['content-type'] = 'application/json';
      headers['idempotency-key'] = `probe-${run}-${i}`;
    }
    const started = performance.now();
    const response = await request(config.baseUrl + probe.paths[i % probe.paths.length], {
      method: probe.method ?? 'GET',
      headers,
      body: probe.body,
      dispatcher,
    });
    await response.body.arrayBuffer();
    times.push(performance.now() - started);
    if (response.statusCode >= 300) errors++;
  }
  times.sort((a, b) => a - b);
  results[probe.name] = {
    p50: quantile(times, 0.5),
    p99: quantile(times, 0.99),
    errors,
    total: config.count,
  };
}
await dispatcher.close();
console.log(JSON.stringify(results));
