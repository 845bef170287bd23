// Pay: card payments, plugged into platform-core as a capability. A project charges through the platform's
// gateway (POST /pay/v1/payments with its own key and an idempotency key): the gateway checks the key, the
// scope and the day's limit of payments, and records Pay's answer, so a charge retried after a lost answer
// is answered from that record and never reaches the processor twice. Pay charges through its processor
// behind a circuit breaker (opossum, reported as pay/processor), keeps each payment, records what it
// charged (pay/amount_minor; the gateway counts pay/payments), publishes pay.payment.succeeded or .failed
// for the project, turns the processor's own signed webhook into pay.payment.settled, and anonymizes a
// person's payments when the platform asks (keeping what the law requires a merchant to keep).
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Capability, fastifyGateway, type GatewayCaller, PlatformError } from '@platform-core/capability';
import { verifyWebhook, WebhookVerificationError } from '@platform-core/webhooks';
import Fastify from 'fastify';
import CircuitBreaker from 'opossum';
import { MANIFEST } from './manifest.ts';
import { startProcessor } from './processor.ts';
import { type Payment, paymentStore } from './store.ts';

declare module 'fastify' {
  interface FastifyRequest {
    platform?: GatewayCaller;
  }
}

const env = process.env;
const HOST = env.HOST ?? '127.0.0.1';
const PORT = Number(env.PORT ?? 4300);
const PLATFORM_URL = env.PLATFORM_URL ?? 'http://127.0.0.1:8080';
// Its key and signing secret: from the environment, or from what `platform capabilities create pay --json`
// printed, saved as capability.json beside this README.
const { key, signingSecret } = env.PAY_CAPABILITY_KEY
  ? { key: env.PAY_CAPABILITY_KEY, signingSecret: env.PAY_SIGNING_SECRETS ?? '' }
  : JSON.parse(readFileSync(new URL('../capability.json', import.meta.url), 'utf8'));
const SECRETS = String(signingSecret).split(',');
// The processor signs its webhooks with a secret it shares with Pay; the stand-in gets a new one each start.
const PROCESSOR_SECRET = env.PAY_PROCESSOR_SECRET ?? `whsec_${randomBytes(24).toString('base64')}`;
const PROCESSOR_URL =
  env.PAY_PROCESSOR_URL ??
  (
    await startProcessor({
      port: Number(env.PAY_PROCESSOR_PORT ?? 4301),
      host: HOST,
      secret: PROCESSOR_SECRET,
      webhookUrl: () => `http://${HOST}:${PORT}/processor/webhooks`,
    })
  ).url;

const platform = new Capability({ apiKey: key, baseUrl: PLATFORM_URL });
const payments = paymentStore(env.PAY_DATA ?? new URL('../.data/pay.db', import.meta.url).pathname);
const amounts = platform.recorder();
try {
  await platform.manifest.put(MANIFEST);
} catch (error) {
  if (!(error instanceof PlatformError) || error.status !== 0) throw error;
  console.error(`pay: no answer from the platform at PLATFORM_URL=${PLATFORM_URL}: is it running there?`);
  process.exit(1);
}

type Charge = { card: string; amount: number; currency: string };
type Charged = { id: string; status: 'approved' } | { id: string; status: 'declined'; reason: string };

/** One charge at the processor: approved or declined is an answer; anything else, a failure the breaker counts. */
async function charge(input: Charge): Promise<Charged> {
  const answer = await fetch(`${PROCESSOR_URL}/charges`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(input),
    signal: AbortSignal.timeout(3000),
  });
  if (answer.status !== 201 && answer.status !== 402)
    throw new Error(`the processor answered ${answer.status}`);
  return (await answer.json()) as Charged;
}
const processor = new CircuitBreaker(charge, {
  timeout: 3000,
  errorThresholdPercentage: 50,
  volumeThreshold: 2,
  resetTimeout: Number(env.PAY_BREAKER_RESET_MS ?? 10_000),
});
const reporter = platform
  .breakerReporter({
    instance: env.PAY_INSTANCE,
    breakers: { processor },
    intervalMs: Number(env.PAY_BREAKER_REPORT_MS ?? 10_000),
    onError: (error) => console.error('reporting the breaker failed', error),
  })
  .start();

const app = Fastify({ logger: false });
// Bodies kept as text: the platform's erasure request and the processor's webhook are verified as sent.
app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
  try {
    done(null, { text: body, json: body === '' ? undefined : JSON.parse(body as string) });
  } catch (error) {
    done(error as Error, undefined);
  }
});
const viaGateway = fastifyGateway(SECRETS);
const jsonOf = (request: { body: unknown }) =>
  ((request.body as { json?: unknown }).json ?? {}) as Record<string, unknown>;
const view = ({ id, amount, currency, status, createdAt }: Payment) => ({
  id,
  amount,
  currency,
  status,
  createdAt,
});
/** A charge's answer: the payment as it was made (the processor's webhook may have settled it since). */
const answerOf = (payment: Payment, status: Payment['status']) => ({ ...view(payment), status });

app.post('/v1/payments', { preHandler: viaGateway }, async (request, reply) => {
  const { amount, currency, card, email, name } = jsonOf(request);
  if (
    !Number.isSafeInteger(amount) ||
    (amount as number) < 1 ||
    typeof currency !== 'string' ||
    !/^[a-z]{3}$/.test(currency) ||
    typeof card !== 'string' ||
    !/^\d{12,19}$/.test(card) ||
    (email !== undefined && typeof email !== 'string') ||
    (name !== undefined && typeof name !== 'string')
  )
    return reply
      .code(400)
      .send({ error: 'amount (minor units), currency (iso, lowercase) and card are needed' });
  const { projectId } = request.platform as GatewayCaller;
  let charged: Charged;
  try {
    charged = await processor.fire({ card, amount: amount as number, currency });
  } catch {
    return reply
      .code(503)
      .send({ error: processor.opened ? 'the processor is unavailable' : 'the charge failed' });
  }
  const id = randomUUID();
  const status = charged.status === 'approved' ? 'succeeded' : 'failed';
  const payment = {
    id,
    projectId,
    amount: amount as number,
    currency,
    status,
    processorId: charged.id,
  } as const;
  payments.insert({
    ...payment,
    email: typeof email === 'string' ? email.toLowerCase() : null,
    name: (name as string) ?? null,
  });
  const data = {
    paymentId: id,
    amount: payment.amount,
    currency,
    ...(status === 'failed' ? { reason: 'card_declined' } : {}),
  };
  await platform.publish({
    projectId,
    type: `pay.payment.${status}`,
    data,
    ...(typeof email === 'string' ? { subjects: [{ type: 'email' as const, value: email }] } : {}),
    idempotencyKey: `payment-${id}`,
  });
  if (status === 'failed')
    return reply
      .code(402)
      .send({ ...answerOf(payments.find(projectId, id) as Payment, status), reason: 'card_declined' });
  amounts.record({ id: `amount-${id}`, projectId, metric: 'amount_minor', value: payment.amount });
  return reply.code(201).send(answerOf(payments.find(projectId, id) as Payment, status));
});

app.get('/v1/payments/:id', { preHandler: viaGateway }, async (request, reply) => {
  const { id } = request.params as { id: string };
  const payment = /^[0-9a-f-]{36}$/.test(id)
    ? payments.find((request.platform as GatewayCaller).projectId, id)
    : undefined;
  return payment ? view(payment) : reply.code(404).send({ error: 'no such payment' });
});

// The processor's own webhook, signed with the secret it shares with Pay: a settled charge, told to the project.
app.post('/processor/webhooks', async (request, reply) => {
  const { text } = request.body as { text: string };
  try {
    const event = await verifyWebhook<{ type: string; data: { id: string } }>(text, request.headers, [
      PROCESSOR_SECRET,
    ]);
    const settled = event.type === 'charge.settled' ? payments.settle(event.data.id) : undefined;
    if (settled)
      await platform.publish({
        projectId: settled.projectId,
        type: 'pay.payment.settled',
        data: { paymentId: settled.id, amount: settled.amount, currency: settled.currency },
        idempotencyKey: `settled-${settled.id}`,
      });
    return { received: true };
  } catch (error) {
    if (error instanceof WebhookVerificationError) return reply.code(401).send({ error: error.message });
    throw error;
  }
});

// The platform asks to erase a person: signed as webhooks are, with Pay's signing secret. Payments are
// anonymized, not deleted: what the law requires a merchant to keep stays. `erased` counts them.
app.post('/erasure', async (request, reply) => {
  const { text } = request.body as { text: string };
  try {
    const asked = await verifyWebhook<{ projectId: string; subject: { type: string; value: string } }>(
      text,
      request.headers,
      SECRETS,
    );
    return {
      erased: asked.subject.type === 'email' ? payments.anonymize(asked.projectId, asked.subject.value) : 0,
    };
  } catch (error) {
    if (error instanceof WebhookVerificationError) return reply.code(401).send({ error: error.message });
    throw error;
  }
});

app.get('/healthz', async () => ({ ok: true, breaker: processor.opened ? 'open' : 'closed' }));

const address = await app.listen({ port: PORT, host: HOST });
console.log(`pay listening on ${address}`);

for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, async () => {
    reporter.stop();
    await amounts.close();
    await app.close();
    payments.close();
    process.exit(0);
  });
