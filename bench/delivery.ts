// delivery-throughput: 20,000 queued deliveries of a 1 KiB event to 1 and to 10 endpoints on a local
// receiver answering 204, against a raw loop of signed POSTs from one undici client to the same receiver
// at the same concurrency; 1 % of signatures checked with the reference verifier.
// isolation: the healthy endpoints' throughput with, and without, one endpoint that times out (5 s).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { stateOf } from '../src/delivery-store/state.ts';
import { parseKeyring, seal } from '../src/lib/crypto.ts';
import {
  alternate,
  type BenchResult,
  type Check,
  ENCRYPTION_KEY,
  errorsOf,
  type Figure,
  type Measure,
  platformEnv,
  ROOT,
  ratioFigure,
  runLoad,
  spawnNode,
  startPlatform,
} from './lib.ts';
import { migrated, seedTenants } from './seed.ts';

const DELIVERIES = 20_000;
const ROUNDS = 5;
const CONCURRENCY = 128; // the worker's; at most a quarter of it to one endpoint
export const DATA = { order: 'x'.repeat(1000) }; // ~1 KiB of JSON

/** $3 events of project $1 with the payload $2, as `e` (id, created_at), for the deliveries that follow. */
export const BENCH_EVENTS = `with e as (
  insert into events (project_id, id, type, data, created_at)
  select $1, uuid_v7_at(t), 'pay.payment.succeeded', $2::jsonb, t
    from generate_series(1, $3), date_trunc('milliseconds', now()) as t
  returning id, created_at
)`;

/** The history rows of the deliveries a CTE `q` put in the queue (as the outbox writes both). */
export const HISTORY_OF_QUEUED = `insert into deliveries (project_id, id, event_id, event_created_at, endpoint_id, kind, created_at)
  select project_id, delivery_id, event_id, event_created_at, endpoint_id, 'dispatch', now() from q`;

export interface Endpoint {
  id: string;
  path: string;
  secret: string;
  /** its deliveries form one ordered lane */
  ordered?: boolean;
}

export async function deliveryThroughput(databaseUrl: string): Promise<BenchResult> {
  const setup = await prepare(databaseUrl);
  const figures: Figure[] = [];
  const checks: Check[] = [];
  let failed = 0;
  let total = 0;
  try {
    for (const count of [1, 10]) {
      const endpoints = await setup.endpoints(count, '/ok');
      const concurrency = Math.min(CONCURRENCY, (CONCURRENCY / 4) * count);
      const body = JSON.stringify({
        id: randomUUID(),
        type: 'pay.payment.succeeded',
        timestamp: new Date().toISOString(),
        data: DATA,
      });
      const baseline = () =>
        runLoad<Measure>('post-loop.ts', {
          urls: endpoints.map((e) => setup.receiver + e.path),
          total: DELIVERIES,
          connections: concurrency,
          body,
        });
      const subject = () =>
        setup.round(
          endpoints.map((e) => ({ endpoint: e, deliveries: DELIVERIES / count })),
          endpoints,
        );
      const rounds = await alternate(ROUNDS, baseline, subject);
      figures.push({
        ...ratioFigure(
          `${DELIVERIES} deliveries to ${count} endpoint(s) vs raw signed POST loop (c=${concurrency})`,
          rounds,
          0.5,
        ),
        notes: 'stretch 0.70',
      });
      const errors = errorsOf(rounds);
      failed += errors.failed;
      total += errors.total;
      checks.push(await setup.verifySamples(endpoints));
    }
  } finally {
    await setup.close();
  }
  return { name: 'delivery-throughput', figures, checks, errors: { failed, total } };
}

/**
 * Twice: at the worker's default concurrency with the slow endpoint's deliveries queued last, and at 32 in
 * flight with them due first. There a claim in due order took only the slow endpoint's and filled the
 * worker's queue, and the healthy ones waited for its sends to time out (claim.ts).
 */
export async function isolation(databaseUrl: string): Promise<BenchResult> {
  const figures: Figure[] = [];
  const checks: Check[] = [];
  let failed = 0;
  let total = 0;
  for (const { concurrency, slowFirst } of [
    { concurrency: CONCURRENCY, slowFirst: false },
    { concurrency: 32, slowFirst: true },
  ]) {
    const setup = await prepare(databaseUrl, {
      PLATFORM_DELIVERY_TIMEOUT_MS: '5000',
      PLATFORM_RETRY_SCHEDULE: '3600',
      PLATFORM_WORKER_CONCURRENCY: String(concurrency),
    });
    try {
      const healthy = await setup.endpoints(10, '/ok');
      const [slow] = await setup.endpoints(1, '/slow');
      if (!slow) throw new Error('no slow endpoint');
      const plan = healthy.map((endpoint) => ({ endpoint, deliveries: DELIVERIES / 10 }));
      const slowPlan = { endpoint: slow, deliveries: 500 };
      const without = () => setup.round(plan, healthy);
      const withSlow = () => setup.round(slowFirst ? [slowPlan, ...plan] : [...plan, slowPlan], healthy);
      const rounds = await alternate(ROUNDS, without, withSlow);
      figures.push({
        ...ratioFigure(
          `healthy throughput with one endpoint timing out (5 s) among 10, ${slowFirst ? 'its deliveries due first' : 'queued last'}, at ${concurrency} in flight, vs without`,
          rounds,
          0.9,
        ),
        notes: 'target: at most 10 % lower',
      });
      checks.push(await setup.verifySamples([...healthy, slow]));
      const errors = errorsOf(rounds);
      failed += errors.failed;
      total += errors.total;
    } finally {
      await setup.close();
    }
  }
  return { name: 'isolation', figures, checks, errors: { failed, total } };
}

/** A migrated database, a receiver process, a worker process, and one project whose endpoints we add. */
export async function prepare(databaseUrl: string, env: Record<string, string> = {}) {
  await migrated(databaseUrl);
  // A project of its own each time, so that one database can be prepared more than once.
  const [tenant] = await seedTenants(databaseUrl, 1, `dl-${randomUUID().slice(0, 8)}`);
  if (!tenant) throw new Error('no tenant');
  const receiverProcess = spawnNode(`${ROOT}bench/load/receiver.ts`, []);
  const receiver = await receiverProcess.waitFor(/listening on (\S+)/);
  const workerEnv = platformEnv(databaseUrl, {
    PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
    PLATFORM_WORKER_CONCURRENCY: String(CONCURRENCY),
    ...env,
  });
  let worker = await startPlatform('worker', workerEnv);
  const client = new pg.Client(databaseUrl);
  await client.connect();
  const keyring = parseKeyring(ENCRYPTION_KEY);
  let made = 0;

  /**
   * A round's deliveries are queued due, as publishing queues them, while the worker is stopped
   * (SIGSTOP). They used to be queued a day ahead and made due by one update. That update moved every
   * row, and the dead versions it left gave each lease room on its page. Rows queued by publishing leave
   * no such room (migration 0025).
   */
  const hold = () => worker.child.kill('SIGSTOP');
  /** Lets the worker go and wakes it. The clock starts after this. */
  const go = async () => {
    worker.child.kill('SIGCONT');
    await client.query(`notify platform_deliveries`);
  };

  /**
   * After a reset, with the worker held, `events` events, each with a delivery due to every one of
   * `endpoints`. They are queued event by event, as publishing queues them (and as the peers benchmark
   * queues the peers' jobs): without the order, PostgreSQL wrote each endpoint's deliveries in a block of
   * their own.
   */
  const queueFanOut = async (endpoints: Endpoint[], events: number) => {
    await reset();
    hold();
    await client.query(
      `${BENCH_EVENTS}, q as (
         insert into delivery_queue (delivery_id, project_id, event_id, event_created_at, endpoint_id, next_attempt_at)
         select uuid_v7_at(e.created_at), $1, e.id, e.created_at, w.id, now()
           from e cross join unnest($4::uuid[]) with ordinality as w(id, n)
          order by e.id, w.n
         returning *
       )
       ${HISTORY_OF_QUEUED}`,
      [tenant.projectId, JSON.stringify(DATA), events, endpoints.map((e) => e.id)],
    );
  };

  const reset = async () => {
    await client.query('truncate delivery_attempts, delivery_queue, deliveries, event_subjects, events');
    await client.query('update webhook_endpoints set rate_next_at = null');
    await fetch(`${receiver}/reset`, { method: 'POST' });
  };

  /** Lets the held worker go and times `expected` deliveries to `measured`. */
  const release = async (measured: Endpoint[], expected: number, onStart?: () => void): Promise<Measure> => {
    const ids = measured.map((e) => e.id);
    await go();
    const started = performance.now();
    onStart?.();
    // Arrivals are counted by the receiver, cheaply; the database (a count over the whole queue, a few
    // ms of PostgreSQL's time that the worker would share) is asked only once they are all in, to see
    // every attempt recorded.
    const paths = measured.map((e) => e.path);
    for (;;) {
      const counts = (await (await fetch(`${receiver}/counts`)).json()) as Record<string, number>;
      if (paths.reduce((sum, path) => sum + (counts[path] ?? 0), 0) >= expected) break;
      if (performance.now() - started > 300_000) throw new Error('deliveries did not arrive in 5 minutes');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    // Recorded when no queue row is left (a small table: counting the history read all of it at each poll).
    for (;;) {
      const { rows } = await client.query(
        `select count(*)::int as n from delivery_queue where endpoint_id = any($1::uuid[])`,
        [ids],
      );
      if (rows[0]?.n === 0) break;
      if (performance.now() - started > 300_000) throw new Error('deliveries did not finish in 5 minutes');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const seconds = (performance.now() - started) / 1000;
    const { rows } = await client.query(
      `select count(*)::int as n from delivery_attempts where not succeeded and status_code is not null`,
    );
    return { rate: expected / seconds, errors: rows[0]?.n ?? 0, total: expected };
  };

  return {
    receiver,
    /** the worker's process id, whose CPU the peers benchmark reads */
    workerPid: () => worker.child.pid as number,
    projectId: tenant.projectId,
    /** Endpoints on the receiver's `prefix`, ordered as a whole or rate-limited when asked. */
    async endpoints(
      count: number,
      prefix: string,
      control: { ordering?: 'endpoint'; rateLimitPerSecond?: number } = {},
    ): Promise<Endpoint[]> {
      const endpoints = Array.from({ length: count }, () => {
        const bytes = Buffer.from(randomUUID().replaceAll('-', ''), 'hex');
        const key = Buffer.concat([bytes, bytes]);
        return {
          id: randomUUID(),
          path: `${prefix}/${made++}`,
          secret: `whsec_${key.toString('base64')}`,
          key,
          ordered: control.ordering === 'endpoint',
        };
      });
      for (const e of endpoints) {
        await client.query(
          `insert into webhook_endpoints (project_id, id, url, event_types, active_secret, ordering, rate_limit_per_second)
           values ($1, $2, $3, '{*}', $4, $5, $6)`,
          [
            tenant.projectId,
            e.id,
            receiver + e.path,
            seal(keyring, e.key, `webhook-secret:${e.id}`),
            control.ordering ?? 'none',
            control.rateLimitPerSecond ?? null,
          ],
        );
      }
      return endpoints;
    },

    /** Queues the planned deliveries with the worker held, lets it go, and times the healthy ones' delivery. */
    async round(
      plan: { endpoint: Endpoint; deliveries: number }[],
      measured: Endpoint[],
      onStart?: () => void,
    ): Promise<Measure> {
      await reset();
      hold();
      for (const { endpoint, deliveries } of plan) {
        await client.query(
          `${BENCH_EVENTS}, q as (
             insert into delivery_queue (delivery_id, project_id, event_id, event_created_at, endpoint_id,
                                         next_attempt_at, lane, held)
             select uuid_v7_at(e.created_at), $1, e.id, e.created_at, $4, now(),
                    case when $5 then '' end, case when $5 and n > 1 then 'ordered' end
               from (select *, row_number() over (order by id) as n from e) as e
              order by n
             returning *
           )
           ${HISTORY_OF_QUEUED}`,
          [tenant.projectId, JSON.stringify(DATA), deliveries, endpoint.id, endpoint.ordered === true],
        );
      }
      const expected = plan
        .filter((p) => measured.includes(p.endpoint))
        .reduce((sum, p) => sum + p.deliveries, 0);
      return release(measured, expected, onStart);
    },

    /** The same for `events` events, each delivered to every one of `endpoints` (a fan-out). */
    async fanOut(endpoints: Endpoint[], events: number, onStart?: () => void): Promise<Measure> {
      await queueFanOut(endpoints, events);
      return release(endpoints, events * endpoints.length, onStart);
    },

    /** Queues `events` deliveries to `endpoint` with the worker held, then lets it go (for a run to watch). */
    async queueAndGo(endpoint: Endpoint, events: number) {
      await queueFanOut([endpoint], events);
      await go();
    },

    /** Deliveries not yet delivered. */
    async unfinished(): Promise<number> {
      const { rows } = await client.query(
        `select count(*)::int as n from deliveries d where project_id = $1 and ${stateOf('d')} <> 'delivered'`,
        [tenant.projectId],
      );
      return rows[0]?.n ?? 0;
    },

    /** Kills the worker (SIGKILL, mid-send) and starts another, as a supervisor would. */
    async killWorker() {
      await worker.stop('SIGKILL');
      worker = await startPlatform('worker', workerEnv);
    },

    async verifySamples(endpoints: Endpoint[]): Promise<Check> {
      const { samples } = (await (await fetch(`${receiver}/stats`)).json()) as {
        samples: { path: string; body: string; headers: Record<string, string> }[];
      };
      let bad = 0;
      // A sample of an endpoint not given is the harness's mistake, not a bad signature: named apart.
      const unknown = new Set<string>();
      for (const sample of samples) {
        const endpoint = endpoints.find((e) => e.path === sample.path);
        if (!endpoint) {
          unknown.add(sample.path);
          continue;
        }
        try {
          new Webhook(endpoint.secret).verify(sample.body, sample.headers);
        } catch {
          bad++;
        }
      }
      return {
        name: `1 % of signatures verify (${samples.length} checked)`,
        ok: samples.length > 0 && bad === 0 && unknown.size === 0,
        detail: `${bad} bad${unknown.size > 0 ? `; no endpoint given for ${[...unknown].join(', ')}` : ''}`,
      };
    },

    async close() {
      await client.end();
      worker.child.kill('SIGCONT'); // a held worker would not see its SIGTERM
      await worker.stop();
      await receiverProcess.stop();
    },
  };
}
