// What every route file shares: the idempotency-key header schema, and the request's transaction scope.
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { type Audit, auditInto } from '../../audit/store.ts';
import type { Db, TransactionHooks } from '../../db/database.ts';
import { principalOf, projectOf } from '../auth.ts';

/** The idempotency-key header (its presence and form are checked first, by http/idempotency.ts). */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.String({ description: '1-255 visible ASCII characters, or a quoted string' }),
});

/** The transaction of an idempotent route's request, and what to do once it ends. */
export function writeScope(request: FastifyRequest): { tx: Db } & TransactionHooks {
  if (!request.tx || !request.txHooks)
    throw new Error(`route ${request.routeOptions.url} is not idempotent but asks for its transaction`);
  return { tx: request.tx, ...request.txHooks };
}

/** The transaction of an idempotent route's request. */
export const transactionOf = (request: FastifyRequest): Db => writeScope(request).tx;

/** The id of the project the request's key belongs to. */
export const projectIdOf = (request: FastifyRequest): string => projectOf(request).id;

/** How the request's change is audited: by its key, with its request id, in its transaction. */
export function auditOf(request: FastifyRequest): Audit {
  const { beforeCommit } = writeScope(request);
  return auditInto(
    { actor: { type: 'key', keyId: principalOf(request).keyId }, requestId: request.id },
    { beforeCommit },
  );
}

/** A reference to a schema added with app.addSchema, for the OpenAPI document. */
export const ref = (id: string) => ({ $ref: `${id}#` });
