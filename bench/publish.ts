// publish: what publishing through the API costs against writing the same rows from a raw SQL loop. One
// project with one endpoint (the common case: an event to one endpoint), `serve` alone (no worker: this
// is the publish path, the deliveries wait in the queue). Each round writes 20,000 events, 32 in flight,
// into tables emptied before it: through the API (POST /core/v1/events with an idempotency key), as plain
// SQL of the same rows (the event, the delivery's history and queue rows, the idempotency record), as
// the service's own statement sent from the raw loop (the ceiling the API can approach), and as the plain
// rows behind a bare HTTP server (what HTTP alone costs here). Beside the ratios, CPU per event of the
// HTTP server, of PostgreSQL and of the load, and the ratio the machine's cores would allow if they were
// the only limit (every process shares them).
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { parseKeyring, seal } from '../src/lib/crypto.ts';
import {
  alternate,
  type BenchResult,
  ENCRYPTION_KEY,
  errorsOf,
  type Figure,
  type Measure,
  median,
  platformEnv,
  ratioFigureWith,
  runLoad,
  startBaseline,
  startPlatform,
} from './lib.ts';
import { postgresCpu, processCpu } from './peers/cpu.ts';
import { migrated, seedTenants } from './seed.ts';

const EVENTS = Number(process.env.BENCH_PUBLISH_EVENTS ?? 20_000);
const ROUNDS = 5;
const CONNECTIONS = 32;
const DATA = { order: 'x'.repeat(1000) }; // ~1 KiB of JSON, as scale's and delivery-throughput's
const TYPE = 'bench.publish.made';

interface Load extends Measure {
  /** the load's own CPU, µs per event */
  cpuUs: number;
}

interface Round extends Measure {
  /** µs of CPU per event: the HTTP server's (none for a raw loop), PostgreSQL's, the load's */
  server: number;
  postgres: number;
  load: number;
}

const cpuOf = (r: Round) => r.server + r.postgres + r.load;

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
  const bare = await startBare({
    url: databaseUrl,
    projectId: tenant.projectId,
    endpointId,
    connections: CONNECTIONS,
  });
  const postgres = await postgresCpu(databaseUrl);

  /** A round of `write`, after emptying what the last one wrote, with the CPU it took per event. */
  const round = (write: () => Promise<Load>, serverPid?: number) => async (): Promise<Round> => {
    await client.query(
      'truncate delivery_attempts, delivery_queue, deliveries, event_subjects, events, idempotency_keys',
    );
    const server = () => (serverPid ? processCpu(serverPid) : 0);
    const before = { server: server(), postgres: postgres() };
    const measured = await write();
    const perEvent = (after: number, was: number) => (after - was) / EVENTS;
    return {
      ...measured,
      server: perEvent(server(), before.server),
      postgres: perEvent(postgres(), before.postgres),
      load: measured.cpuUs,
    };
  };
  const http = (baseUrl: string, pid: number) =>
    round(
      () =>
        runLoad<Load>('publish.ts', {
          baseUrl,
          keys: [tenant.key],
          types: [TYPE],
          total: EVENTS,
          connections: CONNECTIONS,
          prefix: randomUUID(),
          data: DATA,
        }),
      pid,
    );
  const sql = (mode: 'rows' | 'statement') =>
    round(() =>
      runLoad<Load>('publish-sql.ts', {
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
        subject: http(service.baseUrl, service.child.pid as number),
        target: 0.6,
      },
      {
        name: `reference: the service's publish statement from a raw loop vs the same rows (c=${CONNECTIONS})`,
        subject: sql('statement'),
      },
      {
        name: `reference: the same rows behind a bare HTTP server vs from the raw loop (c=${CONNECTIONS})`,
        subject: http(bare.url, bare.pid),
      },
    ];
    for (const { name, subject, target } of cases) {
      const rounds = await alternate(ROUNDS, sql('rows'), subject);
      figures.push(
        ratioFigureWith(
          name,
          rounds,
          { serverCpuUs: (r) => r.server, postgresCpuUs: (r) => r.postgres, loadCpuUs: (r) => r.load },
          {
            target,
            notes: [
              'rate: events written a second; p50/p99: a write, ms; CPU: µs per event',
              `bound by CPU: ${median(rounds.map((r) => cpuOf(r.baseline) / cpuOf(r.subject))).toFixed(2)}`,
              '(the ratio if the cores, which every process shares, were the only limit)',
            ].join('\n    '),
          },
        ),
      );
      const e = errorsOf(rounds);
      errors.failed += e.failed;
      errors.total += e.total;
    }
  } finally {
    await client.end();
    await service.stop();
    await bare.stop();
  }
  return { name: 'publish', figures, checks: [], errors };
}

/** The bare HTTP server of the plain rows (baselines/publish-bare.ts), its configuration in a temporary file. */
async function startBare(config: {
  url: string;
  projectId: string;
  endpointId: string;
  connections: number;
}) {
  const file = path.join(tmpdir(), `bench-bare-${randomUUID()}.json`);
  writeFileSync(file, JSON.stringify(config));
  return startBaseline('publish-bare.ts', [file]).finally(() => rmSync(file, { force: true }));
}
