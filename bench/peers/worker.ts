// A peer's worker in a process of its own, as the service's `worker` is: node worker.ts <config.json>.
// Connects, prints "ready", and starts taking jobs on SIGUSR2 (so the driver can queue a round's jobs
// first and start the clock with the work); SIGTERM stops it gently. Each job is sent as the service
// sends a delivery: the same envelope, a Standard Webhooks signature, the same sender (undici, keep-alive),
// and a failure (not 2xx) thrown back to the library, which retries it.
import { createSecretKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { webhookDestination } from '../../src/delivery/sender.ts';
import { signatureHeader } from '../../src/lib/signature.ts';
import { systemResolver } from '../../src/webhooks/address-policy.ts';
import type { Job } from './peer.ts';
import { type PeerName, peer } from './select.ts';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  peer: PeerName;
  databaseUrl: string;
  redisUrl: string;
  concurrency: number;
  /** whsec_… */
  secret: string;
};
const key = createSecretKey(Buffer.from(config.secret.slice('whsec_'.length), 'base64'));
const sender = webhookDestination({
  allowPrivate: true,
  resolve: systemResolver,
  timeoutMs: 15_000,
  userAgent: 'peer/1',
});

async function send(job: Job) {
  const body = `{"id":${JSON.stringify(job.eventId)},"type":${JSON.stringify(job.type)},"timestamp":"${job.timestamp}","data":${JSON.stringify(job.data)}}`;
  const timestamp = Math.floor(Date.now() / 1000);
  const result = await sender.send({
    endpointId: 'peer',
    eventType: job.type,
    projectId: 'peer',
    eventCreatedAt: new Date(job.timestamp),
    url: job.url,
    headers: {
      'webhook-id': job.eventId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader([key], job.eventId, timestamp, body),
    },
    body,
  });
  if (result.statusCode === null || result.statusCode < 200 || result.statusCode >= 300)
    throw new Error(result.error ?? `HTTP ${result.statusCode}`);
}

const queue = await peer(config.peer, config.databaseUrl, config.redisUrl);
let running: { stop(): Promise<void> } | undefined;
// Nothing else holds the event loop open while it waits for its signal.
const alive = setInterval(() => {}, 60_000);
process.once('SIGUSR2', async () => {
  running = await queue.work(send, config.concurrency);
  console.log('working');
});
process.once('SIGTERM', async () => {
  await running?.stop();
  await queue.close();
  await sender.close();
  clearInterval(alive);
  process.exit(0);
});
console.log('ready');
