// Requests at a fixed rate for `seconds`, on an open loop (schedule.ts): their latencies, and the errors
// (an answer of 400 or over). A write gets a fresh idempotency-key each; bodies are sent as they are.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { onSchedule } from './schedule.ts';

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
const result = await onSchedule(config.rate, config.seconds, async (i) => {
  const headers: Record<string, string> = { 'x-api-key': config.key };
  if (config.method === 'POST') {
    headers['content-type'] = 'application/json';
    headers['idempotency-key'] = `${run}-${i}`;
  }
  const response = await api.request({
    path: config.path,
    method: config.method,
    headers,
    body: config.body === undefined ? undefined : JSON.stringify(config.body),
  });
  await response.body.dump();
  return response.statusCode < 400;
});
await api.close();
console.log(JSON.stringify(result));
