// destinations: for each broker type, deliveries a second through the platform (queued with the worker
// held, then timed until none is left) against a raw loop of the same client publishing the same signed
// messages with the same acknowledgement, at the worker's concurrency for one destination (a quarter of
// 128); and a polling destination's feed read through the API, page by page, against the raw keyset
// SELECT of the same rows. The brokers are the machine's: RabbitMQ 5672, Redis 6379, NATS 4222.
import { randomUUID } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { connect as amqpConnect } from 'amqplib';
import { Redis } from 'ioredis';
import pg from 'pg';
import { parseKeyring, seal } from '../src/lib/crypto.ts';
import { sealPassword } from '../src/webhooks/targets.ts';
import { BENCH_EVENTS, DATA, HISTORY_OF_QUEUED } from './delivery.ts';
import {
  alternate,
  type BenchResult,
  ENCRYPTION_KEY,
  errorsOf,
  type Figure,
  type Measure,
  platformEnv,
  ratioFigure,
  runLoad,
  startPlatform,
} from './lib.ts';
import { migrated, seedTenants } from './seed.ts';

const MESSAGES = 5000;
const FEED = 20_000;
const PAGE = 1000;
const ROUNDS = 3;
const IN_FLIGHT = 32; // the worker's 128, a quarter of it to one destination

/** A fresh place on each broker: an exchange with a bound queue, a stream, a JetStream stream. */
async function places() {
  const name = `bench_${randomUUID().slice(0, 8)}`;
  const amqp = await amqpConnect('amqp://guest:guest@127.0.0.1:5672');
  const channel = await amqp.createChannel();
  await channel.assertExchange(name, 'direct', { durable: true });
  await channel.assertQueue(name, { durable: true });
  await channel.bindQueue(name, name, 'pay');
  const redis = new Redis('redis://127.0.0.1:6379');
  await redis.xgroup('CREATE', name, 'readers', '$', 'MKSTREAM');
  const nats = await natsConnect({ servers: '127.0.0.1:4222' });
  const manager = await jetstreamManager(nats);
  await manager.streams.add({ name, subjects: [`${name}.>`] });
  return {
    targets: {
      rabbitmq: { url: 'amqp://guest:guest@127.0.0.1:5672', exchange: name, routingKey: 'pay' },
      redis: { url: 'redis://127.0.0.1:6379', stream: name },
      nats: { url: 'nats://127.0.0.1:4222', subject: `${name}.pay` },
    },
    /** Empties what a round left, so that every round publishes to the same state. */
    async empty() {
      await channel.purgeQueue(name);
      await redis.xtrim(name, 'MAXLEN', 0);
      await manager.streams.purge(name);
    },
    async close() {
      await channel.deleteQueue(name);
      await channel.deleteExchange(name);
      await amqp.close();
      await redis.del(name);
      redis.disconnect();
      await manager.streams.delete(name);
      await nats.close();
    },
  };
}

export async function destinations(databaseUrl: string): Promise<BenchResult> {
  await migrated(databaseUrl);
  const [tenant] = await seedTenants(databaseUrl, 1, `dst-${randomUUID().slice(0, 8)}`);
  if (!tenant) throw new Error('no tenant');
  const env = platformEnv(databaseUrl, {
    PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
    PLATFORM_WORKER_CONCURRENCY: '128',
  });
  const worker = await startPlatform('worker', env);
  const client = new pg.Client(databaseUrl);
  await client.connect();
  const keyring = parseKeyring(ENCRYPTION_KEY);
  const brokers = await places();
  const figures: Figure[] = [];
  const all: { baseline: Measure; subject: Measure }[] = [];

  /** A destination of `type`, its row as the API writes it (the password sealed apart). */
  const destination = async (type: string, target: Record<string, unknown>) => {
    const id = randomUUID();
    const url = typeof target.url === 'string' ? new URL(target.url) : undefined;
    const password = url?.password ? decodeURIComponent(url.password) : null;
    if (url) url.password = '';
    const clear = { ...target, ...(url ? { url: url.toString(), hasPassword: password !== null } : {}) };
    await client.query(
      `insert into webhook_endpoints (project_id, id, url, event_types, active_secret, destination_type, target, target_secret_sealed)
       values ($1, $2, $3, '{*}', $4, $5, $6, $7)`,
      [
        tenant.projectId,
        id,
        url?.toString() ?? '',
        seal(keyring, Buffer.alloc(32, 3), `webhook-secret:${id}`),
        type,
        type === 'polling' ? {} : clear,
        password === null ? null : sealPassword(keyring, id, password),
      ],
    );
    return id;
  };

  /** `count` deliveries to the destination, queued with the worker held, then timed until none is left. */
  const round = async (id: string, count: number): Promise<Measure> => {
    await client.query('truncate delivery_attempts, delivery_queue, deliveries, event_subjects, events');
    worker.child.kill('SIGSTOP');
    await client.query(
      `${BENCH_EVENTS}, q as (
         insert into delivery_queue (delivery_id, project_id, event_id, event_created_at, endpoint_id, next_attempt_at)
         select uuid_v7_at(e.created_at), $1, e.id, e.created_at, $4, now() from e order by e.id
         returning *
       )
       ${HISTORY_OF_QUEUED}`,
      [tenant.projectId, JSON.stringify(DATA), count, id],
    );
    worker.child.kill('SIGCONT');
    await client.query('notify platform_deliveries');
    const started = performance.now();
    for (;;) {
      const { rows } = await client.query(
        'select count(*)::int as n from delivery_queue where endpoint_id = $1',
        [id],
      );
      if (rows[0]?.n === 0) break;
      if (performance.now() - started > 300_000) throw new Error('deliveries did not finish in 5 minutes');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const seconds = (performance.now() - started) / 1000;
    const { rows } = await client.query(
      'select count(*)::int as n from delivery_attempts where not succeeded',
    );
    return { rate: count / seconds, errors: rows[0]?.n ?? 0, total: count };
  };

  const body = JSON.stringify({
    id: randomUUID(),
    type: 'pay.payment.succeeded',
    timestamp: new Date().toISOString(),
    data: DATA,
  });
  try {
    // BENCH_DESTINATIONS=redis,polling measures those only.
    const only = process.env.BENCH_DESTINATIONS?.split(',');
    for (const [type, target] of Object.entries(brokers.targets)) {
      if (only && !only.includes(type)) continue;
      const id = await destination(type, target);
      const subject = async () => {
        await brokers.empty();
        return round(id, MESSAGES);
      };
      const baseline = async () => {
        await brokers.empty();
        return runLoad<Measure>('broker-loop.ts', {
          type,
          url: target.url,
          target,
          total: MESSAGES,
          connections: IN_FLIGHT,
          body,
        });
      };
      const rounds = await alternate(ROUNDS, baseline, subject);
      all.push(...rounds);
      figures.push(
        ratioFigure(
          `${MESSAGES} deliveries to a ${type} destination vs the raw ${type} client loop (c=${IN_FLIGHT})`,
          rounds,
          0.6,
        ),
      );
    }
    if (!only || only.includes('polling'))
      figures.push(await feedFigure(databaseUrl, tenant, await destination('polling', {}), round, client));
  } finally {
    await brokers.close();
    await client.end();
    await worker.stop();
  }
  return { name: 'destinations', figures, checks: [], errors: errorsOf(all) };
}

/** The feed of `FEED` messages read through the API, page by page, against the raw keyset SELECT. */
async function feedFigure(
  databaseUrl: string,
  tenant: { projectId: string; key: string },
  id: string,
  round: (id: string, count: number) => Promise<Measure>,
  client: pg.Client,
): Promise<Figure> {
  await round(id, FEED);
  const api = await startPlatform('serve', platformEnv(databaseUrl));
  try {
    const subject = async (): Promise<Measure> => {
      const started = performance.now();
      let cursor = '';
      let read = 0;
      for (;;) {
        const query = `limit=${PAGE}${cursor ? `&cursor=${cursor}` : ''}`;
        const response = await fetch(`${api.baseUrl}/core/v1/destinations/${id}/messages?${query}`, {
          headers: { 'x-api-key': tenant.key },
        });
        // Read as the baseline reads its rows: the text, each payload left unparsed (a consumer parses a
        // payload to use it, whichever way it came), the cursor taken from the end.
        const text = await response.text();
        const count = text.split('{"eventId":').length - 1;
        read += count;
        if (count < PAGE) break;
        cursor = (/"nextCursor":"([^"]+)"}$/.exec(text) ?? [])[1] ?? '';
      }
      return { rate: read / ((performance.now() - started) / 1000), errors: read === FEED ? 0 : 1, total: 1 };
    };
    const baseline = async (): Promise<Measure> => {
      const started = performance.now();
      let after = ['0', '0'];
      let read = 0;
      for (;;) {
        const { rows } = await client.query(
          // The rows as stored (each message's entry: its id, type, time and payload as JSON), the
          // fewest columns a reader of the table needs; the API also keeps to its transactions' horizon.
          `select m.xid::text, m.seq::text, m.entry
             from destination_messages m
            where m.project_id = $1 and m.endpoint_id = $2 and (m.xid, m.seq) > ($3::xid8, $4::bigint)
            order by m.xid, m.seq limit $5`,
          [tenant.projectId, id, after[0], after[1], PAGE],
        );
        read += rows.length;
        if (rows.length < PAGE) break;
        const last = rows.at(-1) as { xid: string; seq: string };
        after = [last.xid, last.seq];
      }
      return { rate: read / ((performance.now() - started) / 1000), errors: read === FEED ? 0 : 1, total: 1 };
    };
    const rounds = await alternate(ROUNDS, baseline, subject);
    return ratioFigure(
      `reading a polling feed of ${FEED} through the API (pages of ${PAGE}) vs the raw keyset SELECT`,
      rounds,
      0.7,
    );
  } finally {
    await api.stop();
  }
}
