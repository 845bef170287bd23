// RabbitMQ destinations, through amqplib: a message is delivered when the broker confirms it (publisher
// confirms) and routed it to a queue (it is published mandatory: a message no queue takes comes back, and
// is not delivered). The payload is the body byte for byte; the Standard Webhooks headers and the type go as
// AMQP headers, and the webhook-id as the message id too, so a consumer verifies it as a webhook.
import { type ChannelModel, type ConfirmChannel, connect } from 'amqplib';
import type { Resolver } from '../../webhooks/address-policy.ts';
import { type Destination, messageHeaders, type Outgoing, type SendResult } from '../destination.ts';
import { Connections, dial } from './connections.ts';
import { acknowledged, failed, timed } from './outcome.ts';

interface Link {
  model: ChannelModel;
  /** the confirm channel, opened again after the broker closed it (a missing exchange closes it) */
  channel: Promise<ConfirmChannel> | null;
  /** why the broker last closed the channel, in its words */
  closedFor: string | null;
  /** messages the broker returned as unroutable, by message id, with its words */
  returned: Map<string, string>;
}

export function rabbitmqDestination(options: {
  allowPrivate: boolean;
  resolve: Resolver;
  timeoutMs: number;
}): Destination {
  const links = new Connections<Link>((link) => link.model.close().catch(() => {}));

  const open = async (destinationId: string, raw: string): Promise<Link> => {
    const url = new URL(raw);
    const { address, servername } = await dial(url.hostname, options);
    const tls = url.protocol === 'amqps:';
    const model = await connect(
      {
        protocol: tls ? 'amqps' : 'amqp',
        hostname: address,
        port: url.port ? Number(url.port) : tls ? 5671 : 5672,
        username: decodeURIComponent(url.username) || 'guest',
        password: decodeURIComponent(url.password) || 'guest',
        vhost: url.pathname.length > 1 ? decodeURIComponent(url.pathname.slice(1)) : '/',
        heartbeat: 30,
      },
      { servername, timeout: options.timeoutMs },
    );
    const link: Link = { model, channel: null, closedFor: null, returned: new Map() };
    // A connection that fails or closes is let go of; the next send opens another after a back-off.
    model.on('error', (error: Error) => links.broken(destinationId, brokerWords(error), link));
    model.on('close', () => links.broken(destinationId, 'the broker closed the connection', link));
    return link;
  };

  const channelOf = (link: Link) => {
    link.channel ??= link.model.createConfirmChannel().then((channel) => {
      link.closedFor = null; // a new channel: what closed the last one no longer speaks for it
      channel.on('error', (error: Error) => {
        link.closedFor = brokerWords(error);
      });
      channel.on('close', () => {
        link.channel = null;
      });
      channel.on('return', (message) => {
        const { replyText } = message.fields as { replyText?: string };
        const id = String(message.properties.messageId);
        link.returned.set(
          id,
          `returned: ${replyText} (no queue takes routing key "${message.fields.routingKey}")`,
        );
      });
      return channel;
    });
    return link.channel;
  };

  const publish = async (outgoing: Outgoing, started: number): Promise<SendResult> => {
    const target = outgoing.target as NonNullable<Outgoing['target']>;
    const link = await links.get(outgoing.endpointId, target.url, () =>
      open(outgoing.endpointId, target.url),
    );
    const channel = await channelOf(link);
    const id = outgoing.headers['webhook-id'];
    const body = Buffer.isBuffer(outgoing.body) ? outgoing.body : Buffer.from(outgoing.body);
    const confirmed = await new Promise<string | null>((resolve) => {
      channel.publish(
        target.exchange ?? '',
        target.routingKey ?? '',
        body,
        {
          messageId: id,
          contentType: 'application/json',
          headers: messageHeaders(outgoing),
          persistent: true,
          mandatory: true,
          timestamp: Number(outgoing.headers['webhook-timestamp']),
        },
        (error: unknown) => resolve(error ? (link.closedFor ?? `nack: ${brokerWords(error)}`) : null),
      );
    });
    const returned = link.returned.get(id);
    link.returned.delete(id);
    const durationMs = Math.round(performance.now() - started);
    if (confirmed !== null || returned) return failed(returned ?? (confirmed as string), durationMs);
    return acknowledged('confirmed by the broker', durationMs);
  };

  return {
    send: (outgoing) =>
      timed(options.timeoutMs, 'the broker did not confirm in time', (started) => publish(outgoing, started)),
    close: () => links.close(),
  };
}

/** An amqplib error in the broker's words (its reply code and text), without a stack. */
function brokerWords(error: unknown): string {
  const e = error as { message?: string; code?: string };
  return (e.message ?? String(error)).replace(/^Channel closed by server: /, '').slice(0, 500);
}
