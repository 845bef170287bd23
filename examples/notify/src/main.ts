// Notify: a product of its own, plugged into platform-core as a capability. A project calls it through the
// platform's gateway (POST /notify/v1/messages with its own key); the gateway checks the key, the scope,
// the idempotency key and the daily limit, counts the message, and forwards the request here with the
// caller's context signed. Notify sends through its provider behind a circuit breaker (opossum), keeps
// what it sent by recipient, publishes notify.message.sent for the project, reports its breaker, and
// erases a person's messages when the platform asks (a signed push).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Capability, fastifyGateway, type GatewayCaller, PlatformError } from '@platform-core/capability';
import { verifyWebhook, WebhookVerificationError } from '@platform-core/webhooks';
import Fastify from 'fastify';
import CircuitBreaker from 'opossum';
import { startMailbox } from './mailbox.ts';
import { MANIFEST } from './manifest.ts';
import { messageStore } from './store.ts';

declare module 'fastify' {
  interface FastifyRequest {
    platform?: GatewayCaller;
  }
}

const env = process.env;
const HOST = env.HOST ?? '127.0.0.1';
const PLATFORM_URL = env.PLATFORM_URL ?? 'http://127.0.0.1:8080';
// Its key and signing secret: from the environment, or from what `platform capabilities create notify
// --json` printed, saved as capability.json beside this README.
const created = () => JSON.parse(readFileSync(new URL('../capability.json', import.meta.url), 'utf8'));
const { key, signingSecret } = env.NOTIFY_CAPABILITY_KEY
  ? { key: env.NOTIFY_CAPABILITY_KEY, signingSecret: env.NOTIFY_SIGNING_SECRETS ?? '' }
  : created();
const SECRETS = String(signingSecret).split(',');
const PROVIDER_URL =
  env.NOTIFY_PROVIDER_URL ?? (await startMailbox(Number(env.NOTIFY_MAILBOX_PORT ?? 4101), HOST)).url;

const platform = new Capability({ apiKey: key, baseUrl: PLATFORM_URL });
const messages = messageStore(env.NOTIFY_DATA ?? new URL('../.data/notify.db', import.meta.url).pathname);
try {
  await platform.manifest.put(MANIFEST);
} catch (error) {
  if (!(error instanceof PlatformError) || error.status !== 0) throw error;
  console.error(`notify: no answer from the platform at PLATFORM_URL=${PLATFORM_URL}: is it running there?`);
  process.exit(1);
}

/** One message handed to the provider's HTTP API; any answer but 2xx is a failure the breaker counts. */
async function deliver(message: { to: string; subject: string; text: string }) {
  const answer = await fetch(`${PROVIDER_URL}/send`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(message),
    signal: AbortSignal.timeout(3000),
  });
  if (!answer.ok) throw new Error(`the provider answered ${answer.status}`);
}
const mailer = new CircuitBreaker(deliver, {
  timeout: 3000,
  errorThresholdPercentage: 50,
  volumeThreshold: 2,
  resetTimeout: Number(env.NOTIFY_BREAKER_RESET_MS ?? 10_000),
});
const reporter = platform
  .breakerReporter({
    instance: env.NOTIFY_INSTANCE,
    breakers: { mailer },
    intervalMs: Number(env.NOTIFY_BREAKER_REPORT_MS ?? 10_000),
    onError: (error) => console.error('reporting the breaker failed', error),
  })
  .start();

const app = Fastify({ logger: false });
// Bodies kept as text: the platform's erasure request is verified against the body exactly as sent.
app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
  try {
    done(null, { text: body, json: body === '' ? undefined : JSON.parse(body as string) });
  } catch (error) {
    done(error as Error, undefined);
  }
});
const viaGateway = fastifyGateway(SECRETS);
const caller = (request: { platform?: GatewayCaller }) => request.platform as GatewayCaller;

app.post('/v1/messages', { preHandler: viaGateway }, async (request, reply) => {
  const body = (request.body as { json?: { to?: unknown; subject?: unknown; text?: unknown } }).json ?? {};
  const { to, subject = '', text = '' } = body;
  if (
    typeof to !== 'string' ||
    !/^[^@\s]+@[^@\s]+$/.test(to) ||
    typeof subject !== 'string' ||
    typeof text !== 'string'
  )
    return reply.code(400).send({ error: 'to (an e-mail address), subject and text are needed' });
  const { projectId } = caller(request);
  try {
    await mailer.fire({ to, subject, text });
  } catch (error) {
    return reply.code(503).send({ error: mailer.opened ? 'the provider is unavailable' : String(error) });
  }
  const id = randomUUID();
  messages.insert({ id, projectId, to: to.toLowerCase(), subject });
  await platform.publish({
    projectId,
    type: 'notify.message.sent',
    data: { messageId: id, to },
    subjects: [{ type: 'email', value: to }],
    idempotencyKey: `sent-${id}`,
  });
  return reply.code(201).send({ id, status: 'sent' });
});

app.get('/v1/messages/:id', { preHandler: viaGateway }, async (request, reply) => {
  const { id } = request.params as { id: string };
  const message = /^[0-9a-f-]{36}$/.test(id) ? messages.find(caller(request).projectId, id) : undefined;
  return message ? message : reply.code(404).send({ error: 'no such message' });
});

// The platform asks to erase a person: signed as webhooks are, with Notify's signing secret.
app.post('/erasure', async (request, reply) => {
  const { text } = request.body as { text: string };
  try {
    const asked = await verifyWebhook<{ projectId: string; subject: { type: string; value: string } }>(
      text,
      request.headers,
      SECRETS,
    );
    const erased = asked.subject.type === 'email' ? messages.erase(asked.projectId, asked.subject.value) : 0;
    return { erased };
  } catch (error) {
    if (error instanceof WebhookVerificationError) return reply.code(401).send({ error: error.message });
    throw error;
  }
});

app.get('/healthz', async () => ({ ok: true, breaker: mailer.opened ? 'open' : 'closed' }));

const address = await app.listen({ port: Number(env.PORT ?? 4100), host: HOST });
console.log(`notify listening on ${address}`);

for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, async () => {
    reporter.stop();
    await app.close();
    messages.close();
    process.exit(0);
  });
