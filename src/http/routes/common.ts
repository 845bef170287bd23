import type { FastifyRequest } from 'fastify';
import type { Db } from '../../db/database.ts';
import { principalOf } from '../auth.ts';

/** The idempotency-key header, for the OpenAPI document (presence and form are checked by idempotency.ts). */
export const idempotencyHeader = {
  type: 'object',
  properties: {
    'idempotency-key': { type: 'string', description: '1-255 visible ASCII characters, or a quoted string' },
  },
} as const;

/** The transaction of an idempotent route's request. */
export function transactionOf(request: FastifyRequest): Db {
  if (!request.tx)
    throw new Error(`route ${request.routeOptions.url} is not idempotent but asks for its transaction`);
  return request.tx;
}

/** The id of the project the request's key belongs to. */
export const projectOf = (request: FastifyRequest) => principalOf(request).project.id;

/** The `{id}` path parameter (already validated as a UUID by the route's schema). */
export const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
