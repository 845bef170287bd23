// publish: what publishing through the API costs against writing the same rows from a raw SQL loop. One
// project with one endpoint (the common case: an event to one endpoint), `serve` alone (no worker: this
// is the publish path, the deliveries wait in the queue). Each round writes 20,000 events, 32 in flight,
// into tables emptied before it: through the API (POST /core/v1/events with an idempotency key), as plain
// SQL of the same rows (the event, the delivery's history and queue rows, the idempotency record), and as
// the service's own statement sent from the raw loop (the ceiling the API can approach). Beside the
// ratios, CPU per event of `serve` and of PostgreSQL.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { parseKeyring, seal } from '../src/crypto.ts';
import {
  alternate,
  type BenchResult,
  ENCRYPTION_KEY,
  errorsOf,
  type Figure,
  type Measure,
  platformEnv,
  ratioFigureWith,
  runLoad,
  startPlatform,
} from './lib.ts';
import { postgresCpu, processCpu } from './peers/cpu.ts';
import { migrated, seedTenants } from './seed.ts';

const EVENTS = Number(process.env.BENCH_PUBLISH_EVENTS ?? 20_000);
const ROUNDS = 5;
const CONNECTIONS = 32;
const DATA = { order: 'x'.repeat(1000) }; // ~1 KiB of JSON, as scale's and delivery-throughput's
const TYPE = 'bench.publish.made';

interface Round extends Measure {
  /** µs of CPU per event */
  serve: number;
  postgres: number;
}

export async function publish(databaseUrl: string): Promise<BenchResult> {
  await migrated(databaseUrl);
  const [tenant] = await seedTenants(databaseUrl, 1, 'pub');
  if (!tenant) throw new Error('publish: no tenant');
  const endpointId = randomUUID();
  const client = new pg.Client(databaseUrl);
  await client.connect();
  const secret = seal(parseKeyring(ENCRYPTION_KEY), Buffer.alloc(32, 7), `webhook-secret:${endpointId}`);
  await client.query(
    `insert into webhook_endpoints (project_id, id, url, event_types, active_secret)
     values ($1, $2, 'https://93.184.216.34/hook', array[$3], $4)`,
    [tenant.projectId, endpointId, TYPE, secret],
  );
  const service = await startPlatform('serve', platformEnv(databaseUrl));
  const postgres = await postgresCpu(databaseUrl);
  const servePid = service.child.pid as number;

  /** A round of `write`, after emptying what the last one wrote, with the CPU it took per event. */
  const round = (write: () => Promise<Measure>) => async (): Promise<Round> => {
    await client.query(
      'truncate delivery_attempts, delivery_queue, deliveries, event_subjects, events, idempotency_keys',
    );
    const before = { serve: processCpu(servePid), postgres: postgres() };
    const measured = await write();
    const perEvent = (after: number, was: number) => (after - was) / EVENTS;
    return {
      ...measured,
      serve: perEvent(processCpu(servePid), before.serve),
      postgres: perEvent(postgres(), before.postgres),
    };
  };
  const api = round(() =>
    runLoad<Measure>('publish.ts', {
      baseUrl: service.baseUrl,
      keys: [tenant.key],
      types: [TYPE],
      total: EVENTS,
      connections: CONNECTIONS,
      prefix: randomUUID(),
      data: DATA,
    }),
  );
  const sql = (mode: 'rows' | 'statement') =>
    round(() =>
      runLoad<Measure>('publish-sql.ts', {
        url: databaseUrl,
        mode,
        projectId: tenant.projectId,
        endpointId,
        type: TYPE,
        total: EVENTS,
        connections: CONNECTIONS,
        data: DATA,
      }),
    );

  const figures: Figure[] = [];
  const errors = { failed: 0, total: 0 };
  try {
    const cases = [
      {
        name: `${EVENTS} events published through the API vs the same rows from a raw SQL loop (c=${CONNECTIONS})`,
        subject: api,
        target: 0.6,
      },
      {
        name: `reference: the service's publish statement from a raw loop vs the same rows (c=${CONNECTIONS})`,
        subject: sql('statement'),
      },
    ];
    for (const { name, subject, target } of cases) {
      const rounds = await alternate(ROUNDS, sql('rows'), subject);
      figures.push(
        ratioFigureWith(
          name,
          rounds,
          { serveCpuUs: (r) => r.serve, postgresCpuUs: (r) => r.postgres },
          { target, notes: 'rate: events written a second; p50/p99: a write, ms; CPU: µs per event' },
        ),
      );
      const e = errorsOf(rounds);
      errors.failed += e.failed;
      errors.total += e.total;
    }
  } finally {
    await client.end();
    await service.stop();
  }
  return { name: 'publish', figures, checks: [], errors };
}
