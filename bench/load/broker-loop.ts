// The baseline of a broker destination's throughput: `total` signed messages of the same body published
// by the same client the worker uses, over one connection, `connections` at a time, each waiting for the
// same acknowledgement the worker waits for (RabbitMQ: a publisher confirm of a mandatory, persistent
// message; Redis: XADD NOMKSTREAM's answer; NATS: the JetStream acknowledgement, with a message id).
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { jetstream } from '@nats-io/jetstream';
import { connect as natsConnect, headers as natsHeaders } from '@nats-io/transport-node';
import { connect as amqpConnect } from 'amqplib';
import { Redis } from 'ioredis';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  type: 'rabbitmq' | 'redis' | 'nats';
  url: string;
  target: { exchange?: string; routingKey?: string; stream?: string; subject?: string };
  total: number;
  connections: number;
  body: string;
};
const secret = Buffer.alloc(32, 3);
const body = Buffer.from(config.body);
const signed = () => {
  const id = randomUUID();
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', secret).update(`${id}.${timestamp}.${config.body}`).digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
    'x-platform-event-type': 'pay.payment.succeeded',
    'content-type': 'application/json',
  };
};

async function publisher(): Promise<{ publish: () => Promise<void>; close: () => Promise<void> }> {
  const { target } = config;
  if (config.type === 'rabbitmq') {
    const connection = await amqpConnect(config.url);
    const channel = await connection.createConfirmChannel();
    return {
      publish: () => {
        const headers = signed();
        return new Promise((resolve, reject) =>
          channel.publish(
            target.exchange ?? '',
            target.routingKey ?? '',
            body,
            { messageId: headers['webhook-id'], headers, persistent: true, mandatory: true },
            (error: unknown) => (error ? reject(error) : resolve()),
          ),
        );
      },
      close: () => connection.close(),
    };
  }
  if (config.type === 'redis') {
    const client = new Redis(config.url, { enableOfflineQueue: false, lazyConnect: true });
    await client.connect();
    return {
      publish: async () => {
        const fields = Object.entries(signed()).flat();
        const id = await client.call(
          'XADD',
          target.stream ?? '',
          'NOMKSTREAM',
          '*',
          'payload',
          body,
          ...fields,
        );
        if (id === null) throw new Error('no stream');
      },
      close: async () => client.disconnect(),
    };
  }
  const connection = await natsConnect({ servers: new URL(config.url).host });
  const js = jetstream(connection);
  return {
    publish: async () => {
      const headers = signed();
      const carried = natsHeaders();
      for (const [name, value] of Object.entries(headers)) carried.set(name, value);
      await js.publish(target.subject ?? '', body, { msgID: headers['webhook-id'], headers: carried });
    },
    close: () => connection.close(),
  };
}

const { publish, close } = await publisher();
let next = 0;
let errors = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: config.connections }, async () => {
    for (let i = next++; i < config.total; i = next++) await publish().catch(() => errors++);
  }),
);
const seconds = (performance.now() - started) / 1000;
await close();
console.log(JSON.stringify({ rate: config.total / seconds, errors, total: config.total }));
