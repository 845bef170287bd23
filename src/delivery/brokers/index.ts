// Every destination the worker sends through, chosen by each delivery's type: a webhook's HTTPS POST, a
// broker's publish, the polling feed's append. Each keeps its own connections; closing closes them all.
import type { Database } from '../../db/database.ts';
import type { Resolver } from '../../webhooks/address-policy.ts';
import type { Destination } from '../destination.ts';
import { webhookDestination } from '../sender.ts';
import { natsDestination } from './nats.ts';
import { pollingDestination } from './polling.ts';
import { rabbitmqDestination } from './rabbitmq.ts';
import { redisDestination } from './redis.ts';

export function destinations(options: {
  db: Database;
  allowPrivate: boolean;
  resolve: Resolver;
  timeoutMs: number;
  userAgent: string;
}): Destination {
  const webhook = webhookDestination(options);
  const byType = {
    rabbitmq: rabbitmqDestination(options),
    redis: redisDestination(options),
    nats: natsDestination(options),
    polling: pollingDestination(options),
  };
  return {
    send: (outgoing) => (outgoing.target ? byType[outgoing.target.type] : webhook).send(outgoing),
    close: async () => {
      await Promise.all([webhook, ...Object.values(byType)].map((destination) => destination.close()));
    },
  };
}
