// api: authenticated GET /core/v1/projects/me against bare node:http returning the same JSON, and
// GET /core/v1/webhook-endpoints against a raw pg SELECT of the same rows, at the same concurrency.
// Fastify alone answering the same JSON is measured too, as a reference for the framework's share.
import {
  alternate,
  type BenchResult,
  errorsOf,
  type Measure,
  platformEnv,
  ROOT,
  ratioFigure,
  runLoad,
  spawnNode,
  startPlatform,
} from './lib.ts';
import { migrated, seedTenants } from './seed.ts';

const CONNECTIONS = 32;
const DURATION = 4;
const ROUNDS = 5;

export async function api(databaseUrl: string): Promise<BenchResult> {
  await migrated(databaseUrl);
  const [tenant] = await seedTenants(databaseUrl, 1, 'api');
  if (!tenant) throw new Error('no tenant');
  const service = await startPlatform('serve', platformEnv(databaseUrl));
  const headers = { 'x-api-key': tenant.key };
  const helpers: ReturnType<typeof spawnNode>[] = [];
  const helper = async (script: string, args: string[]) => {
    const child = spawnNode(`${ROOT}bench/baselines/${script}`, args);
    helpers.push(child);
    return child.waitFor(/listening on (\S+)/);
  };
  try {
    // Ten endpoints to list, created through the API.
    for (let i = 0; i < 10; i++) {
      const response = await fetch(`${service.baseUrl}/core/v1/webhook-endpoints`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': `seed-${i}` },
        body: JSON.stringify({
          url: `https://93.184.216.${i + 1}/hook`,
          eventTypes: ['pay.payment.succeeded'],
        }),
      });
      if (response.status !== 201) throw new Error(`seeding endpoints: ${response.status}`);
    }
    const me = await (await fetch(`${service.baseUrl}/core/v1/projects/me`, { headers })).text();
    const bareUrl = await helper('http-json.ts', [me]);
    const fastifyUrl = await helper('fastify-json.ts', [me]);
    const rawUrl = await helper('pg-list.ts', [databaseUrl, tenant.projectId]);
    const load = (url: string, withKey: boolean) => () =>
      runLoad<Measure>('http.ts', {
        url,
        connections: CONNECTIONS,
        duration: DURATION,
        headers: withKey ? headers : {},
      });

    const meRounds = await alternate(
      ROUNDS,
      load(bareUrl, false),
      load(`${service.baseUrl}/core/v1/projects/me`, true),
    );
    const listRounds = await alternate(
      ROUNDS,
      load(rawUrl, false),
      load(`${service.baseUrl}/core/v1/webhook-endpoints`, true),
    );
    const frameworkRounds = await alternate(ROUNDS, load(bareUrl, false), load(fastifyUrl, false));
    const p99 = (rounds: typeof meRounds) => {
      const ratios = rounds
        .map((r) => (r.subject.p99 ?? 0) / Math.max(r.baseline.p99 ?? 1, 1))
        .sort((a, b) => a - b);
      return (ratios[Math.floor(ratios.length / 2)] ?? 0).toFixed(2);
    };
    const errors = [errorsOf(meRounds), errorsOf(listRounds), errorsOf(frameworkRounds)];
    return {
      name: 'api',
      figures: [
        {
          ...ratioFigure(`GET /core/v1/projects/me vs bare node:http (c=${CONNECTIONS})`, meRounds, 0.8),
          notes: `p99 ${p99(meRounds)}× the baseline's (target ≤ 2×; autocannon reports whole milliseconds)`,
        },
        {
          ...ratioFigure(
            `GET /core/v1/webhook-endpoints vs raw pg SELECT (c=${CONNECTIONS})`,
            listRounds,
            0.7,
          ),
          notes: `p99 ${p99(listRounds)}× the baseline's (target ≤ 2×)`,
        },
        {
          ...ratioFigure(
            'reference: Fastify alone answering the same JSON vs bare node:http',
            frameworkRounds,
          ),
          notes: 'the framework’s own share of the gap, measured in the same run',
        },
      ],
      checks: [],
      errors: errors.reduce((sum, e) => ({ failed: sum.failed + e.failed, total: sum.total + e.total })),
    };
  } finally {
    for (const child of helpers) await child.stop();
    await service.stop();
  }
}
