// `platform dev` (`npm run dev`): the service as `start` runs it, made for a developer's machine. Logs are
// readable lines, private and http:// webhook targets are allowed, and a receiver on loopback is subscribed
// to every event of project `dev`, checking and printing each delivery. The key of project `dev` and the
// receiver's endpoint are kept in the data directory (dev.json, readable by its owner only), so every
// start shows the same key and reuses the same endpoint. Refused when PLATFORM_ENV=prod.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pretty from 'pino-pretty';
import { keyService } from '../keys/service.ts';
import type { Config } from '../lib/config.ts';
import { ConfigError } from '../lib/errors.ts';
import { change, projectBySlug } from './common.ts';
import { startDevReceiver } from './dev-receiver.ts';
import { createLogger } from './runtime.ts';
import { type Running, runForDevelopment } from './serve.ts';

interface DevState {
  key: string;
  endpointId: string;
  secret: string;
}

export async function dev(config: Config) {
  if (config.env === 'prod') throw new ConfigError('platform dev is refused when PLATFORM_ENV=prod');
  const devConfig: Config = { ...config, webhookAllowPrivate: true };
  const stream = pretty({
    sync: true,
    colorize: process.stdout.isTTY,
    singleLine: true,
    // a request as one short line: GET /core/v1/projects/me → 200 in 13 ms
    messageFormat: '{msg}{if method}: {method} {url} → {status} in {ms} ms{end}',
    ignore: 'pid,hostname,service,env,requestId,method,route,url,status,ms',
  });
  const log = createLogger(devConfig, stream);
  const running = await runForDevelopment(devConfig, log);
  const receiverPort = config.port === 0 ? 0 : config.port + 1;
  const receiver = await startDevReceiver(config.host, receiverPort, (line) => console.log(line));
  const state = await connect(running, devConfig, receiver.url);
  receiver.secrets = [state.secret];
  console.log(banner(running.address ?? '', receiver.url, state));
}

/** The stored key and endpoint of this database, checked, and made again where they no longer work. */
async function connect(running: Running, config: Config, receiverUrl: string): Promise<DevState> {
  const file = path.join(config.dataDir, 'dev.json');
  const database = config.databaseUrl ?? 'embedded';
  const stored = readStates(file);
  const saved = stored[database];
  const call = api(running);
  let key = running.firstKey ?? saved?.key;
  if (!key || (await call('GET', '/core/v1/projects/me', key)).statusCode !== 200) {
    key = await newKey(running);
  }
  let endpoint = saved && (await call('GET', `/core/v1/webhook-endpoints/${saved.endpointId}`, key));
  let state: DevState;
  if (saved && endpoint?.statusCode === 200) {
    state = { key, endpointId: saved.endpointId, secret: saved.secret };
    if ((endpoint.json() as { url: string }).url !== receiverUrl)
      await call('PATCH', `/core/v1/webhook-endpoints/${saved.endpointId}`, key, { url: receiverUrl });
  } else {
    endpoint = await call('POST', '/core/v1/webhook-endpoints', key, { url: receiverUrl, eventTypes: ['*'] });
    if (endpoint.statusCode !== 201) throw new Error(`the receiver's endpoint was refused: ${endpoint.body}`);
    const created = endpoint.json() as { id: string; secret: string };
    state = { key, endpointId: created.id, secret: created.secret };
  }
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(file, `${JSON.stringify({ ...stored, [database]: state }, null, 2)}\n`, { mode: 0o600 });
  return state;
}

function readStates(file: string): Record<string, DevState> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, DevState>;
  } catch {
    return {};
  }
}

/** A request to the API in the process, as a project's code would make it. */
const api =
  ({ service }: Running) =>
  (method: 'GET' | 'POST' | 'PATCH', url: string, key: string, body?: object) => {
    if (!service.app) throw new Error('the API is not running');
    const headers: Record<string, string> = { 'x-api-key': key };
    if (method !== 'GET') headers['idempotency-key'] = randomUUID();
    if (body)
      headers['content-type'] = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
    return service.app.inject({ method, url, headers, payload: body && JSON.stringify(body) });
  };

/** A new key of project `dev` with every scope (the first start's was not kept, or was revoked). */
async function newKey({ service }: Running): Promise<string> {
  const { db } = service.context;
  const created = await change(db, async (work) =>
    keyService(work).create(await projectBySlug(work.db, 'dev'), { scopes: ['all'], name: 'platform dev' }),
  );
  return created.key;
}

function banner(address: string, receiverUrl: string, state: DevState): string {
  const rule = '─'.repeat(78);
  return `
${rule}
 platform-core, development mode: private webhook targets allowed; never in production

   API        ${address}      reference ${address}/docs
   key        ${state.key}
              project "dev", every scope (kept for this mode in the data directory's dev.json)
   receiver   ${receiverUrl}
              endpoint ${state.endpointId}: every event of "dev" is printed here, its signature checked

 Publish one:
   curl -X POST ${address}/core/v1/events -H "x-api-key: ${state.key}" \\
     -H 'content-type: application/json' -H "idempotency-key: $(date +%s%N)" \\
     -d '{"type": "pay.payment.succeeded", "data": {"amount": 4200}}'
${rule}
platform-core listening on ${address}`;
}
