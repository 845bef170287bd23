// Idempotent writes, as one layer: every mutating route (POST, PUT, PATCH, DELETE) that needs a key gets it,
// by wrapping the route's handler when the route is registered. Route handlers do their writes on
// `request.tx` and know nothing else of idempotency.
//
// One transaction per request: take the key's advisory lock without waiting (held → 409), read the key's
// record (same request → replay; other request → 422), run the handler, record its status and body, commit.
// The claim is sent with the handler's first statement (see operate): the handler may run up to its first
// statement before the claim decides, so handlers do nothing outside request.tx that outlives a refusal.
// The effect and its record commit together or not at all; a 5xx, a crash or a lost connection rolls both
// back, which releases the key at once. A process that hangs inside its transaction is cut off by
// PostgreSQL after 60 s (idle_in_transaction_session_timeout, set on the pool), which releases it too.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type pg from 'pg';
import type { Clock } from '../clock.ts';
import { type Keyring, seal as sealValue, unseal } from '../crypto.ts';
import type { Database, Db } from '../db/database.ts';
import { executable } from '../db/inline.ts';
import { PlatformError, problemBody } from '../errors.ts';
import {
  claimQuery,
  claimRefusal,
  idempotencyStore,
  type Recorded,
  RecordedMeanwhile,
  recordConflict,
  recordQuery,
} from '../idempotency/store.ts';
import { principalOf } from './auth.ts';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const TOKEN = /^[\x21-\x7e]{1,255}$/;
const QUOTED = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/; // an RFC 8941 sf-string

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on every mutating authenticated route at registration. */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    idempotencyKey: string | null;
    /** The request's transaction, on idempotent routes. */
    tx: Db | null;
    /** Runs a callback after the request's transaction commits (e.g. to wake the delivery worker). */
    onCommit: ((callback: () => void) => void) | null;
  }
}

/** The key of an idempotency-key header value: a token of visible ASCII, or a quoted sf-string. */
export function parseIdempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined || header === '') throw new PlatformError('IDEMPOTENCY_KEY_MISSING');
  const invalid = (detail: string) =>
    new PlatformError('IDEMPOTENCY_KEY_INVALID', detail, {
      errors: [{ parameter: 'idempotency-key', detail }],
    });
  if (Array.isArray(header)) throw invalid('send exactly one idempotency-key header');
  const quoted = QUOTED.exec(header);
  const key = quoted?.[1] !== undefined ? quoted[1].replace(/\\(["\\])/g, '$1') : header;
  if (quoted && key.length >= 1 && key.length <= 255) return key;
  if (!TOKEN.test(key))
    throw invalid('the key must be 1-255 visible ASCII characters (0x21-0x7E), or a quoted string');
  return key;
}

/** SHA-256 over the method, the route template, its path parameters and the canonical JSON body. */
export function fingerprint(request: FastifyRequest): Buffer {
  return createHash('sha256')
    .update(
      `${request.method}\n${request.routeOptions.url}\n${canonicalJson(request.params)}\n${canonicalJson(request.body)}`,
    )
    .digest();
}

/** JSON with object keys sorted at every depth, so equal bodies give equal fingerprints. */
export function canonicalJson(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** What became of a request: another holds the key, a recorded result exists, or this one ran. */
type Outcome =
  | { kind: 'busy' }
  | { kind: 'recorded'; fingerprint: Buffer; status: number; body: unknown }
  | { kind: 'done'; status: number; body: unknown };

/**
 * Thrown into the handler when its first statement's claim is refused; the refusal is the outcome. One
 * instance serves every refusal: a replay should not pay for capturing a stack trace.
 */
const CLAIM_REFUSED = new Error('the idempotency claim was refused');

/** Carries a domain error out of the transaction, so the transaction rolls back before it is recorded. */
class DomainRefusal extends Error {
  readonly error: PlatformError;
  constructor(error: PlatformError) {
    super(error.message);
    this.error = error;
  }
}

export function registerIdempotency(
  app: FastifyInstance,
  deps: { db: Database; clock: Clock; keyring: Keyring },
) {
  const { db, clock, keyring } = deps;
  app.decorateRequest('idempotencyKey', null);
  app.decorateRequest('tx', null);
  app.decorateRequest('onCommit', null);

  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => MUTATING.has(m)) || route.config?.access === 'public') return;
    route.config = { ...route.config, idempotent: true };
    route.handler = idempotentHandler(route.handler as RouteHandlerMethod);
    // A route's own onRequest hooks run after the application's (authentication, scope, limits) and
    // before body validation: the order of checks CONTRACT.md sets. Only mutating routes pay for it.
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

  function idempotentHandler(handler: RouteHandlerMethod): RouteHandlerMethod {
    return async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      const projectId = principalOf(request).project.id;
      const key = request.idempotencyKey as string;
      const print = fingerprint(request);
      const records = recordsOf(projectId, key, print);

      let outcome: Outcome;
      try {
        outcome = await operate(
          projectId,
          key,
          records,
          async (tx, onCommit) => {
            request.tx = tx;
            request.onCommit = onCommit;
            try {
              return await handler.call(this, request, reply);
            } catch (error) {
              // A domain 4xx is recorded; a 429 (a limit, not an answer) is not: the key works again later.
              if (error instanceof PlatformError && error.status < 500 && error.status !== 429)
                throw new DomainRefusal(error);
              throw error;
            } finally {
              request.tx = null;
              request.onCommit = null;
            }
          },
          () => reply.statusCode,
        );
      } catch (error) {
        if (error instanceof DomainRefusal) outcome = await recordRefusal(error.error);
        else if (error instanceof RecordedMeanwhile) outcome = await readRecord();
        else throw error; // a fault: rolled back, the key is free again
      }

      if (outcome.kind === 'busy') {
        throw new PlatformError('IDEMPOTENCY_KEY_IN_PROGRESS', undefined, {
          headers: { 'retry-after': '1' },
        });
      }
      if (outcome.kind === 'recorded') {
        if (!outcome.fingerprint.equals(print)) {
          throw new PlatformError(
            'IDEMPOTENCY_KEY_REUSED',
            'this idempotency key was used with a different request',
          );
        }
        reply.header('idempotent-replayed', 'true');
      }
      return send(reply, outcome.status, outcome.body);

      /** A domain 4xx is recorded too, in a transaction of its own since the operation's was rolled back. */
      async function recordRefusal(refusal: PlatformError): Promise<Outcome> {
        const body = problemBody(refusal, request.id);
        try {
          await db.transaction(async (tx) => {
            await idempotencyStore(tx).claim(projectId, key, clock.now());
            await records.write(tx, refusal.status, body);
          });
        } catch (error) {
          return records.refusal(refusalOf(error));
        }
        for (const [name, value] of Object.entries(refusal.options.headers ?? {})) reply.header(name, value);
        return { kind: 'done', status: refusal.status, body };
      }

      /** After losing a race to record: the record that won (or busy, if it has gone again). */
      async function readRecord(): Promise<Outcome> {
        try {
          await idempotencyStore(db).claim(projectId, key, clock.now());
          return { kind: 'busy' };
        } catch (error) {
          return records.refusal(refusalOf(error));
        }
      }
    };
  }

  /**
   * One request's transaction on the hot path, in two round trips: the claim and BEGIN travel with the
   * operation's first statement, and the record with COMMIT. A refused claim stops its query string before
   * BEGIN (an implicit transaction, rolled back at once), so a replay or a 409 costs one round trip.
   * Named statements among them run prepared (see executable): a connection's first use of one prepares it.
   */
  async function operate(
    projectId: string,
    key: string,
    records: ReturnType<typeof recordsOf>,
    run: (tx: Db, onCommit: (callback: () => void) => void) => Promise<unknown>,
    statusOf: () => number,
  ): Promise<Outcome> {
    const client = await db.pool.connect();
    const claim = claimQuery(projectId, key, clock.now());
    const callbacks: (() => void)[] = [];
    let claiming: Promise<unknown> | null = null; // the first query, which carries the claim
    let refused: Outcome | null = null;
    let open = false; // a transaction may be open on the client
    let broken = false;

    /** Sends a statement (and `then`) behind the claim and BEGIN; resolves with the statement's result. */
    const claimThen = async (first: pg.QueryConfig, then = '') => {
      open = true;
      try {
        const text = `${await executable(client, claim)}; begin; ${await executable(client, first)}${then}`;
        const results = (await client.query(text)) as unknown as pg.QueryResult[];
        return results[2] as pg.QueryResult;
      } catch (error) {
        const refusal = claimRefusal(error);
        if (!refusal) throw error;
        open = false;
        refused = records.refusal(refusal);
        throw CLAIM_REFUSED;
      }
    };
    // The handler's statements: the first goes behind the claim; the others wait for it, so none runs
    // outside the transaction if the claim is refused.
    const tx: Db = {
      query: ((statement: string | pg.QueryConfig, values?: unknown[]) => {
        const config = typeof statement === 'string' ? { text: statement, values } : statement;
        if (claiming) return claiming.then(() => client.query(config));
        const first = claimThen(config);
        claiming = first;
        return first;
      }) as Db['query'],
    };

    try {
      let body: unknown;
      try {
        body = await run(tx, (callback) => callbacks.push(callback));
      } catch (error) {
        if (refused) return refused;
        // The handler failed before its first statement: the claim still comes first (a replay of a
        // recorded key wins over, say, today's limit). A domain refusal is recorded under a claim anyway.
        if (!claiming && !(error instanceof DomainRefusal)) {
          const refusal = await client.query(claim).then(() => undefined, claimRefusal);
          if (refusal) return records.refusal(refusal);
        }
        throw error;
      }
      if (refused) return refused; // the handler swallowed the refusal
      const status = statusOf();
      const record = recordQuery(projectId, key, records.seal(status, body), clock.now());
      try {
        await (claiming
          ? client.query(`${await executable(client, record)}; commit`)
          : claimThen(record, '; commit'));
      } catch (error) {
        if (refused) return refused;
        recordConflict(error);
      }
      open = false;
      for (const callback of callbacks) callback();
      return { kind: 'done', status, body };
    } finally {
      if (open) await client.query('rollback').catch(() => (broken = true));
      client.release(broken);
    }
  }

  /**
   * Sealing and opening one key's record. Bodies are sealed: a response may carry a secret shown once
   * (a new webhook signing secret), and the database holds no secret in clear.
   */
  function recordsOf(projectId: string, key: string, print: Buffer) {
    const context = `idempotency:${projectId}:${key}`;
    const seal = (status: number, body: unknown): Recorded => ({
      fingerprint: print,
      status,
      sealedBody:
        body === undefined || body === null
          ? null
          : sealValue(keyring, Buffer.from(JSON.stringify(body)), context),
    });
    const open = (found: Recorded): Outcome => ({
      kind: 'recorded',
      fingerprint: found.fingerprint,
      status: found.status,
      body: found.sealedBody ? JSON.parse(unseal(keyring, found.sealedBody, context).toString()) : null,
    });
    return {
      seal,
      write: (tx: Db, status: number, body: unknown) =>
        idempotencyStore(tx).record(projectId, key, seal(status, body), clock.now()),
      /** The outcome of a refused claim: busy, or the key's record. */
      refusal: (found: 'busy' | Recorded): Outcome => (found === 'busy' ? { kind: 'busy' } : open(found)),
    };
  }
}

/** The refusal a failed claim carries; any other error goes on. */
function refusalOf(error: unknown): 'busy' | Recorded {
  const found = claimRefusal(error);
  if (!found) throw error;
  return found;
}

function send(reply: FastifyReply, status: number, body: unknown) {
  reply.code(status);
  if (status >= 400) reply.type('application/problem+json');
  if (status === 204 || body === null || body === undefined) return reply.send();
  return reply.send(body);
}
