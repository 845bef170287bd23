// scale: does a delivery cost more when the same work is spread over many projects or many endpoints?
// 20,000 events are published through the API (32 in flight, `serve` and `worker` as separate processes)
// and each is delivered to one endpoint on a local receiver answering 204. The shapes: 1 project × 10
// endpoints, 50 projects × 20 endpoints, 1,000 projects × 1 endpoint. Each is run in rounds alternated
// with its control, one project holding as many endpoints as each of the shape's projects (1 × 10 with
// 1 × 1, as the endpoints are what it adds). The figure is the end-to-end rate (publish to the last
// arrival) over the control's, target ≥ 0.9; beside it, CPU per event of `serve`, `worker` and PostgreSQL.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { parseKeyring, seal } from '../src/lib/crypto.ts';
import {
  alternate,
  type BenchResult,
  ENCRYPTION_KEY,
  errorsOf,
  type Figure,
  type Measure,
  platformEnv,
  ROOT,
  ratioFigureWith,
  runLoad,
  spawnNode,
  startPlatform,
} from './lib.ts';
import { postgresCpu, processCpu } from './peers/cpu.ts';
import { migrated, seedTenants, type Tenant } from './seed.ts';

const EVENTS = Number(process.env.BENCH_SCALE_EVENTS ?? 20_000);
const ROUNDS = 5;
const CONNECTIONS = 32;
const DATA = { order: 'x'.repeat(1000) }; // ~1 KiB of JSON, as delivery-throughput's
// BENCH_SCALE_SHAPES=1000x1 runs only the shapes named (projects x endpoints, comma-separated).
const SHAPES = [
  { projects: 1, endpoints: 10, control: 1 },
  { projects: 50, endpoints: 20, control: 20 },
  { projects: 1000, endpoints: 1, control: 1 },
].filter((s) => process.env.BENCH_SCALE_SHAPES?.split(',').includes(`${s.projects}x${s.endpoints}`) ?? true);

interface Round extends Measure {
  /** µs of CPU per event, from publish to delivery */
  serve: number;
  worker: number;
  postgres: number;
}

export async function scale(databaseUrl: string): Promise<BenchResult> {
  await migrated(databaseUrl);
  const receiverProcess = spawnNode(`${ROOT}bench/load/receiver.ts`, []);
  const receiver = await receiverProcess.waitFor(/listening on (\S+)/);
  const env = platformEnv(databaseUrl, { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1' });
  const service = await startPlatform('serve', env);
  const worker = await startPlatform('worker', env);
  const client = new pg.Client(databaseUrl);
  await client.connect();
  const postgres = await postgresCpu(databaseUrl);
  const cpu = () => ({
    serve: processCpu(service.child.pid as number),
    worker: processCpu(worker.child.pid as number),
    postgres: postgres(),
  });
  let made = 0;

  /** `projects` projects, each with `endpoints` endpoints; endpoint j of each takes the type `bench.scale.tj`. */
  const tenancy = async (projects: number, endpoints: number) => {
    const tenants = await seedTenants(databaseUrl, projects, `sc${made}`);
    const keyring = parseKeyring(ENCRYPTION_KEY);
    const rows = tenants.flatMap((t: Tenant) =>
      Array.from({ length: endpoints }, (_, j) => {
        const id = randomUUID();
        const secret = seal(
          keyring,
          Buffer.from(randomUUID().replaceAll('-', '').repeat(2), 'hex'),
          `webhook-secret:${id}`,
        );
        return {
          project: t.projectId,
          id,
          url: `${receiver}/ok/${made++}`,
          type: `bench.scale.t${j}`,
          secret,
        };
      }),
    );
    await client.query(
      `insert into webhook_endpoints (project_id, id, url, event_types, active_secret)
       select p, id, url, array[type], secret
         from unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::bytea[]) as e(p, id, url, type, secret)`,
      [
        rows.map((r) => r.project),
        rows.map((r) => r.id),
        rows.map((r) => r.url),
        rows.map((r) => r.type),
        rows.map((r) => r.secret),
      ],
    );
    return {
      keys: tenants.map((t) => t.key),
      types: Array.from({ length: endpoints }, (_, j) => `bench.scale.t${j}`),
    };
  };

  const round = async (shape: { keys: string[]; types: string[] }): Promise<Round> => {
    await client.query('truncate delivery_attempts, delivery_queue, deliveries, event_subjects, events');
    await fetch(`${receiver}/reset`, { method: 'POST' });
    const before = cpu();
    const started = performance.now();
    const published = await runLoad<Measure>('publish.ts', {
      baseUrl: service.baseUrl,
      ...shape,
      total: EVENTS,
      connections: CONNECTIONS,
      prefix: randomUUID(),
      data: DATA,
    });
    await until(async () => {
      const { arrivals } = (await (await fetch(`${receiver}/ids`)).json()) as { arrivals: number };
      return arrivals >= EVENTS - published.errors;
    });
    await until(async () => {
      const { rows } = await client.query(`select count(*)::int as n from delivery_queue`);
      return rows[0]?.n === 0;
    });
    const seconds = (performance.now() - started) / 1000;
    const after = cpu();
    const perEvent = (key: keyof typeof before) => (after[key] - before[key]) / EVENTS;
    return {
      rate: EVENTS / seconds,
      p50: published.p50,
      p99: published.p99,
      errors: published.errors,
      total: EVENTS,
      serve: perEvent('serve'),
      worker: perEvent('worker'),
      postgres: perEvent('postgres'),
    };
  };

  const figures: Figure[] = [];
  const errors = { failed: 0, total: 0 };
  try {
    for (const shape of SHAPES) {
      const subject = await tenancy(shape.projects, shape.endpoints);
      const control = await tenancy(1, shape.control);
      const rounds = await alternate(
        ROUNDS,
        () => round(control),
        () => round(subject),
      );
      figures.push(
        ratioFigureWith(
          `${EVENTS} events through the API to ${shape.projects} project(s) × ${shape.endpoints} endpoint(s), vs 1 × ${shape.control}`,
          rounds,
          { serveCpuUs: (r) => r.serve, workerCpuUs: (r) => r.worker, postgresCpuUs: (r) => r.postgres },
          {
            target: 0.9,
            notes:
              'rate: events published and delivered a second; p50/p99: the publishing call; CPU: µs per event',
          },
        ),
      );
      const e = errorsOf(rounds);
      errors.failed += e.failed;
      errors.total += e.total;
    }
  } finally {
    await client.end();
    await worker.stop();
    await service.stop();
    await receiverProcess.stop();
  }
  return { name: 'scale', figures, checks: [], errors };
}

async function until(done: () => Promise<boolean>) {
  const started = performance.now();
  while (!(await done())) {
    if (performance.now() - started > 300_000) throw new Error('the events were not delivered in 5 minutes');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
