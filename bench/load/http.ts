// HTTP load with autocannon, in a process of its own. Config (JSON in argv[2]): url, method, body,
// headers, connections, duration; `keys` rotates x-api-key per request (with `keyUses`, each key serves
// that many requests, cycling through windows of 64 keys, as a client reuses its key); `idempotency` =
// "fresh" gives every request a new idempotency-key, or a list of [apiKey, idempotencyKey] pairs replays
// used ones.
import { readFileSync } from 'node:fs';
import autocannon, { type Request } from 'autocannon';

interface Config {
  url: string;
  method?: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
  connections: number;
  duration: number;
  keys?: string[];
  keyUses?: number;
  idempotency?: 'fresh' | [string, string][];
  prefix?: string;
}

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as Config;
let i = 0;
const WINDOW = 64;
const keyOf = (keys: string[], n: number) => {
  const uses = config.keyUses ?? 1;
  const index = Math.floor(n / (WINDOW * uses)) * WINDOW + (n % WINDOW);
  return keys[(uses === 1 ? n : index) % keys.length] as string;
};
const perRequest = config.keys || config.idempotency;

const result = await autocannon({
  url: config.url,
  method: config.method ?? 'GET',
  connections: config.connections,
  duration: config.duration,
  headers: config.headers,
  body: config.body,
  ...(perRequest
    ? {
        requests: [
          {
            setupRequest: (request: Request) => {
              const n = i++;
              const headers: Record<string, string> = { ...config.headers };
              if (Array.isArray(config.idempotency)) {
                const [apiKey, idempotencyKey] = config.idempotency[n % config.idempotency.length] as [
                  string,
                  string,
                ];
                headers['x-api-key'] = apiKey;
                headers['idempotency-key'] = idempotencyKey;
              } else {
                if (config.keys) headers['x-api-key'] = keyOf(config.keys, n);
                if (config.idempotency === 'fresh')
                  headers['idempotency-key'] = `${config.prefix ?? 'b'}-${n}`;
              }
              request.headers = headers;
              return request;
            },
          },
        ],
      }
    : {}),
});

console.log(
  JSON.stringify({
    rate: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    total: result.requests.total + result.errors + result.timeouts,
  }),
);
