// sender: the service's webhook sender (src/delivery/sender.ts, a handler on undici's dispatcher) against
// the same sends through undici's `request` (a response stream and an abort signal each, as the service
// sent before), in this process, to the benchmark's receiver in a process of its own: the same signed
// ~1.1 KiB body, 32 sends in flight, 20,000 sends a round, rounds alternated. Reported: sends a second,
// and this process's CPU time per send (user and system), the figure the worker's CPU per delivery is
// made of. Then the same sender with an endpoint's OAuth 2.0 client credentials (its token cached) against
// without: the worker's CPU per delivery that OAuth costs.

import { createSecretKey, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Agent, request } from 'undici';
import type { Outgoing, SendResult } from '../src/delivery/destination.ts';
import { webhookDestination } from '../src/delivery/sender.ts';
import { signatureHeader } from '../src/lib/signature.ts';
import { systemResolver } from '../src/webhooks/address-policy.ts';
import { alternate, type BenchResult, type Figure, ROOT, spawnNode, spread } from './lib.ts';
import { cpuPerOperation } from './load/summary.ts';

const IN_FLIGHT = 32;
const SENDS = 20_000;
const ROUNDS = 4;
const TIMEOUT_MS = 15_000;

type Send = (delivery: Outgoing) => Promise<SendResult>;
interface Round {
  rate: number;
  cpuUs: number;
}

/** The baseline: undici's `request`, its body read through the response stream, a signal for the timeout. */
function requestSender(): { send: Send; close(): Promise<void> } {
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 64 });
  return {
    async send({ url, headers, body }) {
      const started = performance.now();
      const response = await request(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'bench/1' },
        body,
        dispatcher: agent,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      const chunks: Buffer[] = [];
      for await (const chunk of response.body) chunks.push(chunk);
      const durationMs = Math.round(performance.now() - started);
      const responseBody = Buffer.concat(chunks).toString('utf8');
      const delivered = response.statusCode < 300;
      return {
        delivered,
        statusCode: response.statusCode,
        error: null,
        responseBody,
        durationMs,
        retryAfter: null,
      };
    },
    close: () => agent.close(),
  };
}

/** SENDS signed sends, IN_FLIGHT at a time; throws unless every one is answered 204. */
async function round(send: Send, url: string): Promise<Round> {
  const key = createSecretKey(Buffer.alloc(32, 7));
  const data = JSON.stringify({ amount: 4200, currency: 'eur', note: 'x'.repeat(900) });
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const lane = async () => {
    while (next++ < SENDS) {
      const id = randomUUID();
      const body = `{"id":"${id}","type":"pay.payment.succeeded","timestamp":"${new Date().toISOString()}","data":${data}}`;
      const timestamp = Math.floor(Date.now() / 1000);
      const headers = {
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader([key], id, timestamp, body),
      };
      const event = { eventType: 'pay.payment.succeeded', projectId: 'bench', eventCreatedAt: new Date() };
      const result = await send({ endpointId: 'bench', url, headers, body, ...event });
      if (result.statusCode !== 204) throw new Error(`answered ${result.statusCode}: ${result.error}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  const seconds = (performance.now() - started) / 1000;
  return { rate: SENDS / seconds, cpuUs: cpuPerOperation(cpu, SENDS) };
}

export async function sender(): Promise<BenchResult> {
  const receiver = spawnNode(`${ROOT}bench/load/receiver.ts`, []);
  const url = `${await receiver.waitFor(/listening on (\S+)/)}/ok/sender`;
  const service = webhookDestination({
    allowPrivate: true,
    resolve: systemResolver,
    timeoutMs: TIMEOUT_MS,
    userAgent: 'bench/1',
  });
  const baseline = requestSender();
  // A delivery with OAuth 2.0 client credentials, its token cached (fetched once from a loopback token
  // endpoint, then reused until 60 s before it expires): the same sends, with a bearer.
  const tokens = createServer((_request, response) =>
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end('{"access_token":"bench-token","token_type":"Bearer","expires_in":3600}'),
  );
  await new Promise<void>((resolve) => tokens.listen(0, '127.0.0.1', resolve));
  const tokenUrl = `http://127.0.0.1:${(tokens.address() as { port: number }).port}/token`;
  const oauth = { tokenUrl, clientId: 'bench', clientSecret: 'bench-secret' };
  const withOAuth: Send = (delivery) => service.send({ ...delivery, credentials: { oauth } });
  let rounds: { subject: Round; baseline: Round }[];
  let oauthRounds: { subject: Round; baseline: Round }[];
  try {
    rounds = await alternate(
      ROUNDS,
      () => round(baseline.send, url),
      () => round(service.send, url),
    );
    oauthRounds = await alternate(
      ROUNDS,
      () => round(service.send, url),
      () => round(withOAuth, url),
    );
  } finally {
    await service.close();
    await baseline.close();
    await receiver.stop();
    tokens.close();
  }
  const median = (pick: (r: { subject: Round; baseline: Round }) => number) =>
    Math.round(spread(rounds.map(pick)).median * 10) / 10;
  const cpuRatio = spread(rounds.map((r) => r.baseline.cpuUs / r.subject.cpuUs));
  const oauthCpu = spread(oauthRounds.map((r) => r.baseline.cpuUs / r.subject.cpuUs));
  const figures: Figure[] = [
    {
      name: 'sends a second: the service’s sender vs undici request',
      ratio: spread(rounds.map((r) => r.subject.rate / r.baseline.rate)),
      subject: { rate: Math.round(median((r) => r.subject.rate)) },
      baseline: { rate: Math.round(median((r) => r.baseline.rate)) },
    },
    {
      name: 'CPU per send: undici request over the service’s sender',
      ratio: cpuRatio,
      target: '≥ 1.0',
      met: cpuRatio.median >= 1,
      subject: { cpuUs: median((r) => r.subject.cpuUs) },
      baseline: { cpuUs: median((r) => r.baseline.cpuUs) },
      notes: 'this process’s CPU time (user and system) per send',
    },
    {
      name: 'CPU per delivery: without OAuth over with OAuth (token cached)',
      ratio: oauthCpu,
      target: '≥ 0.95',
      met: oauthCpu.median >= 0.95,
      subject: { cpuUs: Math.round(spread(oauthRounds.map((r) => r.subject.cpuUs)).median * 10) / 10 },
      baseline: { cpuUs: Math.round(spread(oauthRounds.map((r) => r.baseline.cpuUs)).median * 10) / 10 },
      notes: 'the same sender, with and without an endpoint’s client credentials (contract 0.4)',
    },
  ];
  return { name: 'sender', figures, checks: [], errors: { failed: 0, total: 0 } };
}
