// One round of one system, for the peers benchmark: queue a scenario's deliveries, start the clock with
// the work, and read the rate and each process's CPU once every delivery has arrived and been recorded
// as done. The service's rounds go through delivery.ts's set-up (its worker, its receiver); a peer's
// through its library (peer.ts) and a worker process of its own (worker.ts).
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { DATA, type Endpoint } from '../delivery.ts';
import { ROOT, spawnNode } from '../lib.ts';
import { machineCpu, processCpu } from './cpu.ts';
import type { Job, Peer } from './peer.ts';
import type { PeerName } from './select.ts';

/** The secret every peer signs with (the service signs with each endpoint's own). */
export const PEER_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const GIVE_UP_MS = 300_000;

export interface Sample {
  /** deliveries a second */
  rate: number;
  /** CPU over the round, µs: the worker process, the PostgreSQL server, Redis */
  worker: number;
  postgres: number;
  redis: number;
  /** the share of the machine's CPU time left idle over the round */
  idle: number;
  deliveries: number;
}

export interface Meters {
  postgres: () => number;
  redis: () => number;
}

/** Reads the meters at the start and at the end of a round. */
export function meter(meters: Meters, workerPid: () => number) {
  const read = () => ({
    worker: processCpu(workerPid()),
    postgres: meters.postgres(),
    redis: meters.redis(),
    machine: machineCpu(),
  });
  let start = read();
  return {
    start: () => {
      start = read();
    },
    end(rate: number, deliveries: number): Sample {
      const end = read();
      return {
        rate,
        deliveries,
        worker: end.worker - start.worker,
        postgres: end.postgres - start.postgres,
        redis: end.redis - start.redis,
        idle: (end.machine.idle - start.machine.idle) / Math.max(1, end.machine.total - start.machine.total),
      };
    },
  };
}

/** A peer's worker process, connected and waiting for SIGUSR2 to start. */
export async function peerWorker(
  name: PeerName,
  config: { databaseUrl: string; redisUrl: string; concurrency: number },
) {
  const file = path.join(tmpdir(), `bench-peer-${randomBytes(6).toString('hex')}.json`);
  writeFileSync(file, JSON.stringify({ peer: name, secret: PEER_SECRET, ...config }));
  const child = spawnNode(path.join(ROOT, 'bench/peers/worker.ts'), [file]);
  try {
    await child.waitFor(/ready/);
  } finally {
    rmSync(file, { force: true });
  }
  return {
    pid: child.child.pid as number,
    async begin() {
      child.child.kill('SIGUSR2');
      await child.waitFor(/working/);
    },
    kill: () => child.stop('SIGKILL'),
    stop: () => child.stop('SIGTERM'),
  };
}

/**
 * Queues `events` application rows, each with a job per endpoint, in transactions of 500 rows: the jobs
 * in the rows' transaction (or after its commit, for a queue outside PostgreSQL).
 */
export async function queueJobs(client: pg.ClientBase, queue: Peer, urls: string[], events: number) {
  for (let done = 0; done < events; done += 500) {
    const ids = Array.from({ length: Math.min(500, events - done) }, () => randomUUID());
    const timestamp = new Date().toISOString();
    const jobs: Job[] = ids.flatMap((eventId) =>
      urls.map((url) => ({ url, eventId, type: 'pay.payment.succeeded', timestamp, data: DATA })),
    );
    await client.query('begin');
    await client.query(`insert into bench_orders (id, data) select unnest($1::uuid[]), $2::jsonb`, [
      ids,
      JSON.stringify(DATA),
    ]);
    await queue.enqueue(client, jobs);
    await client.query('commit');
    await queue.afterCommit?.(jobs);
  }
}

/** Waits until the receiver has counted `expected` arrivals on `paths` and `done()` says so too. */
export async function arrived(
  receiver: string,
  paths: string[],
  expected: number,
  done: () => Promise<boolean>,
) {
  const started = performance.now();
  for (;;) {
    const counts = (await (await fetch(`${receiver}/counts`)).json()) as Record<string, number>;
    if (paths.reduce((sum, p) => sum + (counts[p] ?? 0), 0) >= expected && (await done())) return;
    if (performance.now() - started > GIVE_UP_MS)
      throw new Error(`${expected} deliveries did not finish in time`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** One throughput round of a peer: `events` events, a job for each of `endpoints` each. */
export async function peerRound(
  name: PeerName,
  queue: Peer,
  env: { client: pg.ClientBase; receiver: string; meters: Meters; databaseUrl: string; redisUrl: string },
  endpoints: Endpoint[],
  events: number,
  concurrency: number,
): Promise<Sample> {
  await fetch(`${env.receiver}/reset`, { method: 'POST' });
  await queue.clear();
  await env.client.query('truncate bench_orders');
  const worker = await peerWorker(name, {
    databaseUrl: env.databaseUrl,
    redisUrl: env.redisUrl,
    concurrency,
  });
  try {
    const urls = endpoints.map((e) => env.receiver + e.path);
    await queueJobs(env.client, queue, urls, events);
    const cpu = meter(env.meters, () => worker.pid);
    const started = performance.now();
    await worker.begin();
    const expected = events * endpoints.length;
    await arrived(
      env.receiver,
      endpoints.map((e) => e.path),
      expected,
      async () => (await queue.unfinished()) === 0,
    );
    return cpu.end(expected / ((performance.now() - started) / 1000), expected);
  } finally {
    await worker.stop();
  }
}

/** The receiver's distinct arrivals and all arrivals (their difference: duplicates). */
export async function arrivals(receiver: string) {
  return (await (await fetch(`${receiver}/ids`)).json()) as { unique: number; arrivals: number };
}

/** What a worker's SIGKILL mid-run cost: deliveries lost and duplicated, and the time to finish after it. */
export interface Crash {
  lost: number;
  duplicated: number;
  /** ms from the kill to the last delivery done, or null when not done within the cap */
  recoveredMs: number | null;
}
