// What every route file shares: the plugin preamble, the idempotency-key header, path ids, and the
// request's project. A route file declares each operation's schemas and access and calls one service
// method through request.services (services.ts); nothing here knows a domain rule.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import { projectOf } from '../auth.ts';

export type RouteApp = Parameters<FastifyPluginAsyncTypebox>[0];

/** A route plugin: the schemas its answers refer to by $id, then its routes. */
export const routes =
  (schemas: TSchema[], define: (app: RouteApp) => void): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const schema of schemas) app.addSchema(schema);
    define(app);
  };

/** The idempotency-key header (its presence and form are checked first, by http/idempotency.ts). */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.String({ description: '1-255 visible ASCII characters, or a quoted string' }),
});

/** A path id. One that is not a UUID names nothing: 404, like an id of another project (see fault.ts). */
export const IdParamsSchema = Type.Object({ id: Type.String({ format: 'uuid' }) });

/** The id of the project the request's key belongs to. */
export const projectIdOf = (request: FastifyRequest): string => projectOf(request).id;

/** A reference to a schema added with app.addSchema, for the OpenAPI document. */
export const ref = (id: string) => ({ $ref: `${id}#` });

/**
 * Where an endpoint's sub-routes live: under its webhook endpoint (spec section 4), and under its
 * destination (contract 0.4: a destination has every sub-route of a webhook endpoint). The same operation
 * under both, each with its own operation id, record and tag; a destination that is not a webhook is not
 * found under the first (http/webhook-only.ts).
 */
export const MOUNTS = [
  {
    path: '/core/v1/webhook-endpoints',
    record: 'WebhookEndpoint',
    tag: 'webhooks',
    named: (webhook: string, _destination: string) => webhook,
  },
  {
    path: '/core/v1/destinations',
    record: 'Destination',
    tag: 'destinations',
    named: (_webhook: string, destination: string) => destination,
  },
] as const;
