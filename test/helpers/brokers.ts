// The machine's brokers as a consumer sees them: a RabbitMQ queue bound to a fresh exchange, a Redis stream,
// a NATS JetStream stream, each made for one test and read back; and private Redis and NATS servers a test
// may stop and start.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { connect as amqpConnect } from 'amqplib';
import { Redis } from 'ioredis';
import { freePort, spawnProgram } from '../../support/process.ts';

export const RABBITMQ_URL = 'amqp://guest:guest@127.0.0.1:5672';
export const REDIS_URL = 'redis://127.0.0.1:6379';
export const NATS_URL = 'nats://127.0.0.1:4222';

/** A message as a consumer received it: its body byte for byte, and its headers. */
export interface Consumed {
  body: string;
  headers: Record<string, string>;
}

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

/** A durable exchange and a durable queue bound to it with routing key `pay`, read back. */
export async function rabbitmqQueue(url = RABBITMQ_URL) {
  const connection = await amqpConnect(url);
  after(() => connection.close().catch(() => {}));
  const channel = await connection.createChannel();
  const exchange = unique('platform-test');
  const queue = unique('platform-test-q');
  await channel.assertExchange(exchange, 'direct', { durable: true, autoDelete: false });
  await channel.assertQueue(queue, { durable: true });
  await channel.bindQueue(queue, exchange, 'pay');
  after(async () => {
    const cleanup = await amqpConnect(url).catch(() => undefined);
    if (!cleanup) return;
    const ch = await cleanup.createChannel();
    await ch.deleteQueue(queue).catch(() => {});
    await ch.deleteExchange(exchange).catch(() => {});
    await cleanup.close().catch(() => {});
  });
  return {
    exchange,
    queue,
    /** Every message in the queue now (taken off it), with its AMQP headers and message id. */
    async take(): Promise<(Consumed & { messageId: string })[]> {
      const reader = await amqpConnect(url);
      const ch = await reader.createChannel();
      const taken: (Consumed & { messageId: string })[] = [];
      for (;;) {
        const message = await ch.get(queue, { noAck: true });
        if (!message) break;
        const headers = Object.fromEntries(
          Object.entries(message.properties.headers ?? {}).map(([k, v]) => [k, String(v)]),
        );
        taken.push({
          body: message.content.toString(),
          headers,
          messageId: String(message.properties.messageId),
        });
      }
      await reader.close();
      return taken;
    },
  };
}

/** A Redis stream made for the test (the destination sends only to a stream that exists), read back. */
export async function redisStream(url = REDIS_URL) {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 }).on('error', () => {});
  await client.connect();
  const stream = unique('platform-test');
  await client.xgroup('CREATE', stream, 'readers', '$', 'MKSTREAM');
  after(async () => {
    await client.del(stream).catch(() => {});
    client.disconnect();
  });
  return {
    stream,
    async entries(): Promise<(Consumed & { id: string })[]> {
      const reader = new Redis(url, { maxRetriesPerRequest: 1 }).on('error', () => {});
      const rows = (await reader.xrange(stream, '-', '+')) as [string, string[]][];
      reader.disconnect();
      return rows.map(([id, fields]) => {
        const map: Record<string, string> = {};
        for (let i = 0; i < fields.length; i += 2) map[fields[i] as string] = fields[i + 1] as string;
        const { payload = '', ...headers } = map;
        return { id, body: payload, headers };
      });
    },
  };
}

/** A JetStream stream taking `<prefix>.>`, read back. */
export async function natsStream(url = NATS_URL) {
  const connection = await natsConnect({ servers: new URL(url).host });
  after(() => connection.close().catch(() => {}));
  const manager = await jetstreamManager(connection);
  const name = unique('platform_test').replace(/-/g, '_');
  await manager.streams.add({ name, subjects: [`${name}.>`] });
  after(() => manager.streams.delete(name).catch(() => {}));
  return {
    subject: `${name}.pay`,
    async messages(): Promise<(Consumed & { seq: number })[]> {
      const info = await manager.streams.info(name);
      const out: (Consumed & { seq: number })[] = [];
      const stream = await jetstream(connection).streams.get(name);
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
        const message = await stream.getMessage({ seq });
        if (!message) continue;
        const headers: Record<string, string> = {};
        for (const [key, values] of message.header ?? []) headers[key.toLowerCase()] = values[0] ?? '';
        out.push({ seq, body: message.string(), headers });
      }
      return out;
    },
  };
}

/** A private redis-server on a free port, that a test stops and starts. */
export async function privateRedis() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'redis-'));
  let child: ReturnType<typeof spawnProgram> | undefined;
  const start = async () => {
    child = spawnProgram(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--dir', dir],
      { PATH: process.env.PATH },
    );
    await child.waitFor(/Ready to accept connections/, 10_000);
  };
  await start();
  after(() => child?.stop('SIGKILL'));
  return { url: `redis://127.0.0.1:${port}`, start, stop: () => child?.stop() };
}

/** A private nats-server with JetStream on a free port, its store kept across a stop and start. */
export async function privateNats() {
  const port = await freePort();
  const store = mkdtempSync(join(tmpdir(), 'nats-'));
  let child: ReturnType<typeof spawnProgram> | undefined;
  const start = async () => {
    child = spawnProgram('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], {
      PATH: process.env.PATH,
    });
    await child.waitFor(/Server is ready/, 10_000);
  };
  await start();
  after(() => child?.stop('SIGKILL'));
  return { url: `nats://127.0.0.1:${port}`, start, stop: () => child?.stop() };
}
