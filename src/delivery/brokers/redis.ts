// Redis Streams destinations, through ioredis (the client the shared rate limits use): a message is
// delivered when XADD answers with its entry's id. The stream must exist (XADD NOMKSTREAM: a mistyped
// name is refused, said in the log, rather than a stream nobody reads made); its length is capped when the
// target asks (MAXLEN ~). The entry's fields are `payload` (the body byte for byte), the Standard Webhooks
// headers and the type, so a consumer verifies it as a webhook.
import { Redis } from 'ioredis';
import type { Resolver } from '../../webhooks/address-policy.ts';
import { type Destination, messageHeaders, type Outgoing } from '../destination.ts';
import { Connections, dial } from './connections.ts';
import { acknowledged, failed, timed } from './outcome.ts';

export function redisDestination(options: {
  allowPrivate: boolean;
  resolve: Resolver;
  timeoutMs: number;
}): Destination {
  const clients = new Connections<Redis>(async (client) => {
    client.disconnect();
  });

  const open = async (destinationId: string, raw: string) => {
    const url = new URL(raw);
    const { address, servername } = await dial(url.hostname, options);
    const client = new Redis({
      host: address,
      port: url.port ? Number(url.port) : 6379,
      username: decodeURIComponent(url.username) || undefined,
      password: decodeURIComponent(url.password) || undefined,
      db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
      tls: url.protocol === 'rediss:' ? { servername } : undefined,
      lazyConnect: true,
      connectTimeout: options.timeoutMs,
      commandTimeout: options.timeoutMs,
      // This pool reconnects, after its back-off: the client does not on its own, nor queue commands.
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
    });
    client.on('error', (error: Error) => clients.broken(destinationId, error.message, client));
    client.on('end', () => clients.broken(destinationId, 'the connection to Redis ended', client));
    await client.connect();
    return client;
  };

  const add = async (outgoing: Outgoing, started: number) => {
    const target = outgoing.target as NonNullable<Outgoing['target']>;
    const client = await clients.get(outgoing.endpointId, target.url, () =>
      open(outgoing.endpointId, target.url),
    );
    const fields: (string | Buffer)[] = [
      'payload',
      Buffer.isBuffer(outgoing.body) ? outgoing.body : Buffer.from(outgoing.body),
    ];
    for (const [name, value] of Object.entries(messageHeaders(outgoing))) fields.push(name, value);
    const cap = target.maxLen ? ['MAXLEN', '~', String(target.maxLen)] : [];
    const stream = target.stream as string;
    const id = (await client.call('XADD', stream, 'NOMKSTREAM', ...cap, '*', ...fields)) as string | null;
    const durationMs = Math.round(performance.now() - started);
    if (id === null) return failed(`no stream: "${stream}" does not exist (XADD NOMKSTREAM)`, durationMs);
    return acknowledged(`XADD ${id}`, durationMs);
  };

  return {
    send: (outgoing) =>
      timed(options.timeoutMs, 'Redis did not answer XADD in time', (started) => add(outgoing, started)),
    close: () => clients.close(),
  };
}
