// AI: completions budgeted in tokens, the way LLM gateways budget them. A request reserves its worst case
// (maxTokens) against the project's daily limit of ai/tokens before the model runs, commits what the
// model used, and releases everything if the model fails: a project never runs past its day, however many
// requests race. It keeps each prompt by the end user it was for, and erases them by pull: it reads its
// erasure tasks from the platform and answers each.
import { readFileSync } from 'node:fs';
import {
  Capability,
  fastifyGateway,
  type GatewayCaller,
  type Manifest,
  PlatformError,
} from '@platform-core/capability';
import Fastify from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    platform?: GatewayCaller;
  }
}

const env = process.env;
const PLATFORM_URL = env.PLATFORM_URL ?? 'http://127.0.0.1:8080';
// Its key and signing secret: from the environment, or from what `platform capabilities create ai --json`
// printed, saved as capability.json beside this README.
const { key, signingSecret } = env.AI_CAPABILITY_KEY
  ? { key: env.AI_CAPABILITY_KEY, signingSecret: env.AI_SIGNING_SECRETS ?? '' }
  : JSON.parse(readFileSync(new URL('../capability.json', import.meta.url), 'utf8'));
const platform = new Capability({ apiKey: key, baseUrl: PLATFORM_URL });
const SECRETS = String(signingSecret).split(',');

const MANIFEST: Manifest = {
  description: 'Completions, metered in tokens.',
  scopes: [{ name: 'ai:complete', description: 'Ask for completions' }],
  metrics: [
    { name: 'tokens', description: 'Tokens used by completions', unit: 'token', defaultDailyLimit: 100_000 },
  ],
  eventTypes: [],
  providers: [], // its stand-in model runs in process: no breaker to report
  erasure: { mode: 'pull' },
  gateway: { routes: [{ method: 'POST', path: '/v1/completions', scope: 'ai:complete', idempotent: true }] },
};
try {
  await platform.manifest.put(MANIFEST);
} catch (error) {
  if (!(error instanceof PlatformError) || error.status !== 0) throw error;
  console.error(`ai: no answer from the platform at PLATFORM_URL=${PLATFORM_URL}: is it running there?`);
  process.exit(1);
}

/** Prompts kept by project and end user (this example keeps them in memory; a real one in its database). */
const prompts = new Map<string, string[]>();
const keyOf = (projectId: string, user: string) => `${projectId} ${user}`;

/** A stand-in model: as many tokens as words, at most maxTokens; "fail" in the prompt makes it fail. */
function complete(prompt: string, maxTokens: number) {
  if (prompt.includes('fail')) throw new Error('the model failed');
  const words = prompt.split(/\s+/).filter(Boolean);
  return { text: words.reverse().join(' '), tokens: Math.min(maxTokens, words.length * 2) };
}

const app = Fastify();
app.post('/v1/completions', { preHandler: fastifyGateway(SECRETS) }, async (request, reply) => {
  const { projectId } = request.platform as GatewayCaller;
  const {
    prompt,
    maxTokens = 256,
    user,
  } = (request.body ?? {}) as { prompt?: unknown; maxTokens?: unknown; user?: unknown };
  if (typeof prompt !== 'string' || typeof user !== 'string' || !Number.isSafeInteger(maxTokens))
    return reply.code(400).send({ error: 'prompt, user and a whole maxTokens are needed' });
  try {
    const answer = await platform.withReservation(
      { projectId, metric: 'tokens', amount: maxTokens as number },
      async () => {
        const result = complete(prompt, maxTokens as number);
        return { used: result.tokens, result };
      },
    );
    const key = keyOf(projectId, user);
    prompts.set(key, [...(prompts.get(key) ?? []), prompt]);
    return { text: answer.text, tokens: answer.tokens };
  } catch (error) {
    if (error instanceof PlatformError && error.code === 'USAGE_LIMIT_EXCEEDED')
      return reply.code(429).send({ error: 'the project’s tokens for today are spent' });
    return reply.code(502).send({ error: (error as Error).message });
  }
});

/** Reads the erasure tasks and answers each: the end user's prompts (by external_id) are forgotten. */
async function eraseAsked() {
  const { data } = await platform.erasureTasks();
  for (const task of data) {
    const key = keyOf(task.projectId, task.subject.value);
    const erased = task.subject.type === 'external_id' ? (prompts.get(key)?.length ?? 0) : 0;
    prompts.delete(key);
    await platform.completeErasure(task.id, erased);
  }
}
const polling = setInterval(
  () => void eraseAsked().catch((error) => console.error('reading erasure tasks failed', error)),
  Number(env.AI_ERASURE_POLL_MS ?? 5000),
);

app.get('/healthz', async () => ({ ok: true }));

const address = await app.listen({ port: Number(env.PORT ?? 4200), host: env.HOST ?? '127.0.0.1' });
console.log(`ai listening on ${address}`);
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, async () => {
    clearInterval(polling);
    await app.close();
    process.exit(0);
  });
