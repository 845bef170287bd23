// Billing: a product of its own that invoices every project's usage of every product. An operator grants
// it projects:read and usage:read; it reads the platform's usage change feed into its ledger every second
// (a write behind a circuit breaker, reported as billing/ledger), closes periods by a command
// (close.ts), and publishes billing.invoice.created, or billing.invoice.adjusted when late usage changes a
// closed period, for the project. Projects read their invoices and set who receives them through the
// platform's gateway. It answers erasure by pull: invoices are kept, as the law requires, and the person
// named on them is anonymized.
import { fastifyGateway, type GatewayCaller } from '@platform-core/capability';
import Fastify from 'fastify';
import CircuitBreaker from 'opossum';
import { syncFeed } from './billing.ts';
import { ledger, platform, prices, SECRETS, unreachable } from './settings.ts';

declare module 'fastify' {
  interface FastifyRequest {
    platform?: GatewayCaller;
  }
}

const env = process.env;
await platform.manifest
  .put({
    description: 'Invoices for every project’s usage, from a price list.',
    scopes: [
      { name: 'billing:read', description: 'Read the project’s invoices' },
      { name: 'billing:manage', description: 'Set who receives the project’s invoices' },
    ],
    metrics: [],
    eventTypes: [
      { name: 'billing.invoice.created', description: 'A period was closed: the project’s invoice for it.' },
      { name: 'billing.invoice.adjusted', description: 'Usage that arrived late changed a closed period.' },
    ],
    providers: [{ name: 'ledger', description: 'Billing’s own store' }],
    erasure: { mode: 'pull' },
    gateway: {
      routes: [
        { method: 'GET', path: '/v1/invoices', scope: 'billing:read', idempotent: false },
        { method: 'PUT', path: '/v1/contact', scope: 'billing:manage', idempotent: true },
      ],
    },
  })
  .catch(unreachable);

// The ledger's writes behind a breaker: a store that keeps failing stops being asked for a while.
const feed = new CircuitBreaker(() => syncFeed(platform, ledger, prices), {
  timeout: false,
  errorThresholdPercentage: 50,
  volumeThreshold: 2,
  resetTimeout: 10_000,
});
const reporter = platform
  .breakerReporter({
    instance: env.BILLING_INSTANCE,
    breakers: { ledger: feed },
    intervalMs: Number(env.BILLING_BREAKER_REPORT_MS ?? 10_000),
    onError: (error) => console.error('reporting the breaker failed', error),
  })
  .start();

/** Erasure by pull: each task answered with what was anonymized (invoices are kept). */
async function eraseAsked() {
  const { data } = await platform.erasureTasks();
  for (const task of data) {
    const erased = task.subject.type === 'email' ? ledger.erase(task.projectId, task.subject.value) : 0;
    await platform.completeErasure(task.id, erased);
  }
}
const every = (ms: number, work: () => Promise<unknown>, what: string) =>
  setInterval(
    () => void work().catch((error) => console.error(`${what} failed:`, error.message ?? error)),
    ms,
  );
const loops = [
  every(Number(env.BILLING_FEED_POLL_MS ?? 1000), () => feed.fire(), 'reading the usage feed'),
  every(Number(env.BILLING_ERASURE_POLL_MS ?? 5000), eraseAsked, 'reading erasure tasks'),
];

const app = Fastify({ logger: false });
const viaGateway = fastifyGateway(SECRETS);
const projectOf = (request: { platform?: GatewayCaller }) => (request.platform as GatewayCaller).projectId;

app.get('/v1/invoices', { preHandler: viaGateway }, async (request) => ({
  data: ledger.invoicesOf(projectOf(request)),
}));

app.put('/v1/contact', { preHandler: viaGateway }, async (request, reply) => {
  const { email } = (request.body ?? {}) as { email?: unknown };
  if (typeof email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(email))
    return reply.code(400).send({ error: 'email (who receives the invoices) is needed' });
  ledger.setContact(projectOf(request), email);
  return { email: email.toLowerCase() };
});

app.get('/healthz', async () => ({ ok: true, ledger: feed.opened ? 'open' : 'closed' }));

const address = await app.listen({ port: Number(env.PORT ?? 4400), host: env.HOST ?? '127.0.0.1' });
console.log(`billing listening on ${address}`);

for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, async () => {
    for (const loop of loops) clearInterval(loop);
    reporter.stop();
    await app.close();
    ledger.close();
    process.exit(0);
  });
