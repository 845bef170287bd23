// A destination that is not a webhook is not a webhook endpoint: under /core/v1/webhook-endpoints/{id} it
// is not found, as an id that exists nowhere (it is under /core/v1/destinations/{id}). Checked before the
// handler, on the pool (the request's services are not made yet, so its transaction is untouched).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.ts';
import { notFound } from '../lib/errors.ts';
import { endpointStore } from '../webhooks/store.ts';
import { projectOf } from './auth.ts';

const WEBHOOK_ENDPOINT = '/core/v1/webhook-endpoints/:id';

export function registerWebhookOnly(app: FastifyInstance, db: Db) {
  const store = endpointStore(db);
  // A hook shared by every route under the prefix, so the id is read from whatever params it has: each
  // of those routes has validated an `id` before its preHandler runs.
  const webhookOnly = async (request: FastifyRequest) => {
    const { params } = request;
    if (typeof params !== 'object' || params === null || !('id' in params)) return;
    const found = await store.targetOf(projectOf(request).id, String(params.id));
    if (found && found.destination_type !== 'webhook') throw notFound('webhook endpoint');
  };
  app.addHook('onRoute', (route) => {
    if (route.url !== WEBHOOK_ENDPOINT && !route.url.startsWith(`${WEBHOOK_ENDPOINT}/`)) return;
    const own = route.preHandler
      ? Array.isArray(route.preHandler)
        ? route.preHandler
        : [route.preHandler]
      : [];
    route.preHandler = [...own, webhookOnly];
  });
}
