// NATS JetStream destinations, through the official client (@nats-io/transport-node and
// @nats-io/jetstream): a message is delivered when the stream that takes its subject acknowledges it. Its
// Nats-Msg-Id is the webhook-id, so the stream drops a repeat of it within its duplicate window (an attempt
// retried after an answer lost on the way is acknowledged as a duplicate, and delivered once). The payload
// is the body byte for byte; the Standard Webhooks headers and the type go as NATS headers.
import { jetstream } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import type { Resolver } from '../../webhooks/address-policy.ts';
import { type Destination, messageHeaders, type Outgoing } from '../destination.ts';
import { Connections, dial } from './connections.ts';
import { acknowledged, timed } from './outcome.ts';

export function natsDestination(options: {
  allowPrivate: boolean;
  resolve: Resolver;
  timeoutMs: number;
}): Destination {
  const links = new Connections<NatsConnection>((connection) => connection.close().catch(() => {}));

  const open = async (destinationId: string, raw: string) => {
    const url = new URL(raw);
    const { address, servername } = await dial(url.hostname, options);
    const tls = url.protocol === 'natss:';
    // Over TLS the client checks the certificate against the name it dials (it takes no other): the name,
    // just checked. Otherwise the address checked.
    const dialled = tls ? servername : address;
    const host = dialled.includes(':') ? `[${dialled}]` : dialled;
    const connection = await connect({
      servers: `${host}:${url.port || 4222}`,
      user: decodeURIComponent(url.username) || undefined,
      pass: decodeURIComponent(url.password) || undefined,
      tls: tls ? {} : undefined,
      timeout: options.timeoutMs,
      // This pool reconnects, after its back-off: the client does not on its own.
      reconnect: false,
      name: 'platform-core delivery worker',
    });
    void connection
      .closed()
      .then((error) =>
        links.broken(destinationId, error ? error.message : 'the connection to NATS closed', connection),
      );
    return connection;
  };

  const publish = async (outgoing: Outgoing, started: number) => {
    const target = outgoing.target as NonNullable<Outgoing['target']>;
    const connection = await links.get(outgoing.endpointId, target.url, () =>
      open(outgoing.endpointId, target.url),
    );
    const carried = headers();
    for (const [name, value] of Object.entries(messageHeaders(outgoing))) carried.set(name, value);
    const body = Buffer.isBuffer(outgoing.body) ? outgoing.body : Buffer.from(outgoing.body);
    const subject = target.subject as string;
    const ack = await jetstream(connection)
      .publish(subject, body, {
        msgID: outgoing.headers['webhook-id'],
        headers: carried,
        timeout: options.timeoutMs,
      })
      .catch((error: Error) => {
        // Nothing answers a publish on a subject no stream takes: the client reads that as JetStream off.
        if (!/no responders|jetstream is not enabled/i.test(error.message)) throw error;
        throw new Error(`no stream: no JetStream stream takes subject "${subject}" (no responders)`);
      });
    const repeat = ack.duplicate ? ' (a repeat, dropped by the stream)' : '';
    return acknowledged(
      `stream ${ack.stream} seq ${ack.seq}${repeat}`,
      Math.round(performance.now() - started),
    );
  };

  return {
    send: (outgoing) =>
      timed(options.timeoutMs, 'the stream did not acknowledge in time', (started) =>
        publish(outgoing, started),
      ),
    close: () => links.close(),
  };
}
