// A peer's publish→receipt latency, in one process so both times come from one clock (as
// ../load/latency.ts measures the service): node latency.ts <config.json>. Publishes at fixed rates (open
// loop): each publish is a transaction that inserts an application row and queues its job beside it (or,
// for BullMQ, queues it once committed). Latency runs from the publish's commit to the webhook's arrival
// at this process's receiver (on a thread of its own: ../load/arrivals.ts). The peer's worker runs in
// its own process, started by the driver.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { now, startArrivals } from '../load/arrivals.ts';
import { type PeerName, peer } from './select.ts';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  peer: PeerName;
  databaseUrl: string;
  redisUrl: string;
  rates: number[];
  seconds: number;
  data: unknown;
};
const answered = new Map<string, number>();
const receiver = await startArrivals();
const url = `${receiver.url}/hook`;

const queue = await peer(config.peer, config.databaseUrl, config.redisUrl);
await queue.prepare();
const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 32 });

async function publish() {
  const job = {
    url,
    eventId: randomUUID(),
    type: 'pay.payment.succeeded',
    timestamp: new Date().toISOString(),
    data: config.data,
  };
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query('insert into bench_orders (id, data) values ($1, $2)', [job.eventId, config.data]);
    await queue.enqueue(client, [job]);
    await client.query('commit');
  } finally {
    client.release();
  }
  await queue.afterCommit?.([job]);
  answered.set(job.eventId, now());
}

const results = [];
for (const rate of config.rates) {
  answered.clear();
  await receiver.clear();
  let errors = 0;
  const count = rate * config.seconds;
  const started = performance.now();
  const sends: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const wait = started + (i * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    sends.push(publish().catch(() => void errors++));
  }
  await Promise.all(sends);
  const achieved = count / ((performance.now() - started) / 1000);
  const { quantile: at, lost } = await receiver.latencies(answered);
  results.push({
    rate,
    achieved,
    p50: at(0.5),
    p99: at(0.99),
    max: at(1),
    lost,
    errors,
    failures: {},
    total: count,
  });
}
await pool.end();
await queue.close();
await receiver.close();
console.log(JSON.stringify(results));
process.exit(0);
