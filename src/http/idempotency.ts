// Idempotent writes as one layer of the API: every mutating route (POST, PUT, PATCH, DELETE) that needs a
// key gets it, by wrapping the route's handler when the route is registered. Handlers do their writes on
// `request.tx` and know nothing else of idempotency; the protocol, the records and the pipelined
// transaction live in src/idempotency/ (the whole path, step by step: idempotency/write.ts).
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { Database, Db, SoleWrite, TransactionHooks } from '../db/database.ts';
import { type Outcome, runIdempotent } from '../idempotency/pipeline.ts';
import { fingerprint, parseIdempotencyKey } from '../idempotency/protocol.ts';
import type { Principal } from '../keys/service.ts';
import type { Clock } from '../lib/clock.ts';
import type { Keyring } from '../lib/crypto.ts';
import { PlatformError, problemBody } from '../lib/errors.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { principalOf } from './auth.ts';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** The scope of the idempotency keys of operator requests (which belong to no project). */
const OPERATOR_SCOPE = '00000000-0000-0000-0000-000000000000';

/** The idempotency keys' scope of a principal: its project, its capability (a name-based UUID), or the operators'. */
export function scopeOf(principal: Principal): string {
  if (principal.project) return principal.project.id;
  if (!principal.capability) return OPERATOR_SCOPE;
  const hash = createHash('sha256').update(`capability:${principal.capability}`).digest('hex');
  return `${hash.slice(0, 8)}-${hash.slice(8, 12)}-5${hash.slice(13, 16)}-8${hash.slice(17, 20)}-${hash.slice(20, 32)}`;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on every mutating authenticated route at registration. */
    idempotent?: boolean;
    /**
     * false for a POST that changes nothing (a key's verification) or whose body's own ids are its
     * idempotency (usage records): it takes no idempotency-key.
     */
    idempotencyKey?: boolean;
  }
  interface FastifyRequest {
    idempotencyKey: string | null;
    /** The request's transaction, on idempotent routes. */
    tx: Db | null;
    /** What to do once it ends (wake the delivery worker after a commit, give back what it took if not). */
    txHooks: TransactionHooks | null;
  }
}

export function registerIdempotency(
  app: FastifyInstance,
  deps: {
    db: Database;
    clock: Clock;
    keyring: Keyring;
    metrics: Pick<Metrics, 'idempotency' | 'soleWrites'>;
  },
) {
  const counted: Record<Outcome['kind'], { inc(): void }> = {
    done: deps.metrics.idempotency.labels('fresh'),
    replayed: deps.metrics.idempotency.labels('replayed'),
    busy: deps.metrics.idempotency.labels('in_progress'),
    reused: deps.metrics.idempotency.labels('reused'),
  };
  const soleWrites = {
    committed: deps.metrics.soleWrites.labels('committed'),
    missed: deps.metrics.soleWrites.labels('missed'),
  };
  app.decorateRequest('idempotencyKey', null);
  app.decorateRequest('tx', null);
  app.decorateRequest('txHooks', null);

  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const exempt = route.config?.access === 'public' || route.config?.idempotencyKey === false;
    if (!methods.some((m) => MUTATING.has(m)) || exempt) return;
    route.config = { ...route.config, idempotent: true };
    route.handler = idempotent(route.handler as RouteHandlerMethod);
    // A route's own onRequest hooks run after the application's (authentication, scope, limits) and
    // before body validation: the order of checks docs/api.md sets. Only mutating routes pay for it.
    const own = route.onRequest ? (Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]) : [];
    route.onRequest = [...own, requireIdempotencyKey];
  });

  function requireIdempotencyKey(
    request: FastifyRequest,
    _reply: FastifyReply,
    done: (error?: Error) => void,
  ) {
    try {
      request.idempotencyKey = parseIdempotencyKey(request.headers['idempotency-key']);
      done();
    } catch (error) {
      done(error as Error);
    }
  }

  function idempotent(handler: RouteHandlerMethod): RouteHandlerMethod {
    return async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      const claim = {
        // The scope of the key: the project, a capability's own, or the operators' (one for them all).
        projectId: scopeOf(principalOf(request)),
        key: request.idempotencyKey as string,
        fingerprint: fingerprint({
          method: request.method,
          route: request.routeOptions.url ?? '',
          params: request.params,
          body: request.body,
        }),
        now: deps.clock.now(),
      };
      const outcome = await runIdempotent(deps, claim, {
        run: async (tx, hooks) => {
          request.tx = tx;
          // A sole write answers with the status the handler set before it wrote (reply.code first).
          const sole = async (write: SoleWrite, body: unknown) => {
            const committed = await hooks.sole(write, { status: reply.statusCode, body });
            soleWrites[committed ? 'committed' : 'missed'].inc();
            return committed;
          };
          request.txHooks = { ...hooks, sole };
          try {
            const body = await handler.call(this, request, reply);
            return { status: reply.statusCode, body };
          } finally {
            request.tx = null;
            request.txHooks = null;
          }
        },
        // A domain 4xx is recorded; a 429 (a limit, not an answer) is not: the key works again later.
        refusal: (error) =>
          error instanceof PlatformError && error.status < 500 && error.status !== 429
            ? { status: error.status, body: problemBody(error, request.id), headers: error.options.headers }
            : undefined,
      });
      counted[outcome.kind].inc();
      return send(reply, outcome);
    };
  }
}

/** The answer of an outcome (a replay marked so), or the problem of a key busy or reused. */
export function answerOf(reply: FastifyReply, outcome: Outcome) {
  if (outcome.kind === 'busy')
    throw new PlatformError('IDEMPOTENCY_KEY_IN_PROGRESS', undefined, { headers: { 'retry-after': '1' } });
  if (outcome.kind === 'reused')
    throw new PlatformError(
      'IDEMPOTENCY_KEY_REUSED',
      'this idempotency key was used with a different request',
    );
  if (outcome.kind === 'replayed') reply.header('idempotent-replayed', 'true');
  return { answer: outcome.answer };
}

function send(reply: FastifyReply, outcome: Outcome) {
  const { status, body } = answerOf(reply, outcome).answer;
  // A refusal's headers (retry-after, say) go out with it; they are not recorded, so never replayed.
  if (outcome.kind === 'done')
    for (const [name, value] of Object.entries(outcome.answer.headers ?? {})) reply.header(name, value);
  reply.code(status);
  if (status >= 400) reply.type('application/problem+json');
  if (status === 204 || body === null || body === undefined) return reply.send();
  return reply.send(body);
}
