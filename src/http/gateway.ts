// The gateway (docs/capabilities.md): a capability's declared routes served at `/<capability>/v1/…` on the
// service's own port, so a project calls every product with one base URL and one key. A request meets
// Core's rules (the key, the route's scope, the request rate; the idempotency-key rules when the route is
// idempotent; the daily limit of the route's metric, checked before and counted after a 2xx), then goes
// to the capability's upstream with the signed context (plane/gateway/forwarding.ts). Bodies stream both ways,
// except an idempotent route's: its answer is recorded, so it is read whole (both up to 1 MiB).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Agent, type Dispatcher, errors as undiciErrors } from 'undici';
import type { Context } from '../context.ts';
import { runIdempotent } from '../idempotency/pipeline.ts';
import { fingerprint, parseIdempotencyKey } from '../idempotency/protocol.ts';
import { claimFirst } from '../idempotency/write.ts';
import { PlatformError } from '../lib/errors.ts';
import { answerHeaders, upstreamHeaders } from '../plane/gateway/forwarding.ts';
import { type GatewayMatch, matchGateway } from '../plane/gateway/routes.ts';
import { principalOf } from './auth.ts';
import { BoundedBody, readBounded } from './gateway-body.ts';
import {
  AnswerBrokenOff,
  AnswerTooLarge,
  callUpstream,
  type Reading,
  type UpstreamAnswer,
  type WholeAnswer,
  type WholeReading,
} from './gateway-upstream.ts';
import { answerOf, scopeOf } from './idempotency.ts';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const MAX_BODY = 1024 * 1024;
/** An answer this small, of known length, is read whole and sent as one buffer. */
const SMALL_ANSWER = 16 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    /** the declared route a gateway request matched, set when its access is decided */
    gatewayMatch: GatewayMatch | null;
  }
}

function matchOf(request: FastifyRequest): GatewayMatch {
  if (!request.gatewayMatch) throw new Error('a gateway request is forwarded only once it matched a route');
  return request.gatewayMatch;
}

/** An idempotent route's answer as recorded and replayed: its end-to-end headers with it. */
interface RecordedAnswer {
  status: number;
  contentType: string;
  text: string;
  /** absent from answers recorded before headers were (they replay without) */
  headers?: Record<string, string | string[]>;
}

/** An upstream answer that is sent but not recorded (a 5xx, 409 or 429: the key works again). */
class NotRecorded extends Error {
  readonly answer: RecordedAnswer;
  constructor(answer: RecordedAnswer) {
    super('an upstream answer that is not recorded');
    this.answer = answer;
  }
}

/** What the gateway reads of the process's context. */
type GatewayDeps = Pick<
  Context,
  'clock' | 'config' | 'db' | 'keyring' | 'limits' | 'meter' | 'registry' | 'settings' | 'signing'
>;

interface Gateway {
  context: GatewayDeps;
  /** keep-alive connections to the upstreams, this process's own */
  agent: Agent;
  /** each upstream URL parsed once (an operator sets a handful) */
  upstreams: Map<string, { origin: string; basePath: string }>;
}

export function registerGateway(app: FastifyInstance, context: GatewayDeps) {
  const gateway: Gateway = { context, agent: new Agent({ connections: 128 }), upstreams: new Map() };
  app.addHook('onClose', () => gateway.agent.close());
  return app.register(async (scope) => {
    scope.decorateRequest('gatewayMatch', null);
    // Bodies are forwarded as received: no parser reads them here.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    scope.route({
      method: [...METHODS],
      url: '/:capability/v1/*',
      schema: { hide: true },
      config: {
        idempotencyKey: false,
        accessOf: (request) => {
          // Without its settings lease this process cannot vouch for the routes it knows (one may have
          // left, or its upstream changed): a 503, as for an outage, until the lease is renewed.
          if (!context.settings.held())
            return new PlatformError(
              'SERVICE_UNAVAILABLE',
              'this process is catching up with a settings change',
            );
          const match = matchGateway(context.registry, request.method, request.raw.url ?? '');
          if (!match)
            return new PlatformError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`);
          request.gatewayMatch = match;
          return match.route.scope;
        },
      },
      handler: (request, reply) => forward(gateway, request, reply),
    });
  });
}

async function forward(gateway: Gateway, request: FastifyRequest, reply: FastifyReply) {
  const match = matchOf(request);
  if (match.route.idempotent && request.method !== 'GET') await idempotent(gateway, request, reply);
  else await metered(gateway.context, request, () => streamed(gateway, request, reply));
  return reply;
}

/**
 * Calls upstream under the route's metric: its daily limit taken before (429 past it), counted after a
 * 2xx, given back otherwise. A replayed answer never gets here: it is neither limited nor counted again.
 */
async function metered(context: GatewayDeps, request: FastifyRequest, upstream: () => Promise<number>) {
  const { capability, route } = matchOf(request);
  const projectId = principalOf(request).project?.id as string;
  const giveBack = route.metric
    ? await context.limits.take(projectId, capability, route.metric, 1, { strict: true })
    : () => {};
  let counted = false;
  try {
    const status = await upstream();
    counted = status >= 200 && status < 300;
    if (counted && route.metric) context.meter.count(projectId, capability, route.metric);
  } finally {
    if (!counted) giveBack();
  }
}

/**
 * Forwards the request; the upstream's answer streams back as it is written (server-sent events reach
 * the client one by one), a small one of known length as one buffer.
 */
async function streamed(gateway: Gateway, request: FastifyRequest, reply: FastifyReply): Promise<number> {
  const body = hasBody(request) ? request.raw.pipe(new BoundedBody(MAX_BODY)) : undefined;
  const answer = await call(gateway, request, body, { whole: false, small: SMALL_ANSWER });
  await reply.code(answer.statusCode).headers(answerHeaders(answer.headers)).send(answer.body);
  return answer.statusCode;
}

/** An idempotent route: its answer recorded under the request's idempotency key, and replayed. */
async function idempotent(gateway: Gateway, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { context } = gateway;
  const match = matchOf(request);
  const key = parseIdempotencyKey(request.headers['idempotency-key']);
  const body = hasBody(request) ? await readBounded(request.raw, MAX_BODY) : Buffer.alloc(0);
  const claim = {
    projectId: scopeOf(principalOf(request)),
    key,
    fingerprint: fingerprint({
      method: request.method,
      route: `/${match.capability}${match.route.path}`,
      params: { target: match.target },
      body: body.toString('base64'),
    }),
    now: context.clock.now(),
  };
  let sent: RecordedAnswer;
  try {
    const outcome = await runIdempotent(context, claim, {
      run: async (tx) => {
        await claimFirst(tx); // before the upstream is called: a concurrent retry waits for this answer
        let recorded: RecordedAnswer = { status: 0, contentType: '', text: '' };
        await metered(context, request, async () => {
          const answer = await call(gateway, request, body.length > 0 ? body : undefined, {
            whole: true,
            max: MAX_BODY,
          });
          const {
            'content-type': contentType,
            'content-length': _,
            ...headers
          } = answerHeaders(answer.headers);
          recorded = {
            status: answer.statusCode,
            contentType: String(contentType ?? 'application/octet-stream'),
            text: answer.body.toString(),
            headers,
          };
          return recorded.status;
        });
        if (recorded.status >= 500 || recorded.status === 409 || recorded.status === 429)
          throw new NotRecorded(recorded);
        const { status, ...recordedBody } = recorded;
        return { status, body: recordedBody };
      },
      refusal: () => undefined,
    });
    const { answer } = answerOf(reply, outcome);
    sent = { status: answer.status, ...(answer.body as Omit<RecordedAnswer, 'status'>) };
  } catch (error) {
    if (!(error instanceof NotRecorded)) throw error;
    sent = error.answer;
  }
  await reply
    .code(sent.status)
    .headers(sent.headers ?? {})
    .type(sent.contentType)
    .send(sent.text);
}

/**
 * One call upstream, with the signed context; 502 when it cannot be reached or breaks off its answer, 504
 * when it does not answer in time. The path goes as received, after the upstream's own base path: never
 * through a URL parser, which would read `\` as `/` or resolve dot segments and so forward another path
 * than the one that matched.
 */
async function call(
  gateway: Gateway,
  request: FastifyRequest,
  body: NodeJS.ReadableStream | Buffer | undefined,
  reading: WholeReading,
): Promise<WholeAnswer>;
async function call(
  gateway: Gateway,
  request: FastifyRequest,
  body: NodeJS.ReadableStream | Buffer | undefined,
  reading: Reading,
): Promise<UpstreamAnswer>;
async function call(
  gateway: Gateway,
  request: FastifyRequest,
  body: NodeJS.ReadableStream | Buffer | undefined,
  reading: Reading,
): Promise<UpstreamAnswer> {
  const { context } = gateway;
  const match = matchOf(request);
  const principal = principalOf(request);
  const upstream = upstreamOf(gateway, match.upstream);
  const target = `${upstream.basePath}${match.target}`;
  const keys = await context.signing.keysOf(match.capability);
  const headers = upstreamHeaders(
    request.headers,
    {
      requestId: request.id,
      method: request.method,
      target,
      projectId: principal.project?.id as string,
      keyId: principal.keyId,
      scopes: principal.scopes,
      timestamp: Math.floor(Date.now() / 1000),
    },
    keys,
  );
  try {
    return await callUpstream(
      gateway.agent,
      {
        origin: upstream.origin,
        path: target,
        method: request.method as Dispatcher.HttpMethod,
        headers,
        body: body as Dispatcher.DispatchOptions['body'],
        headersTimeout: context.config.gatewayTimeoutMs,
        // A stream (server-sent events) may rest between writes for as long as it likes; the time-out
        // applies to its headers. An answer read whole to be recorded is bounded in time as well.
        bodyTimeout: reading.whole ? context.config.gatewayTimeoutMs : 0,
      },
      reading,
    );
  } catch (error) {
    throw upstreamFailure(context, match.capability, error);
  }
}

/** What a failed call upstream answers. */
function upstreamFailure(context: GatewayDeps, capability: string, error: unknown): PlatformError {
  if (error instanceof PlatformError) return error;
  if (error instanceof undiciErrors.HeadersTimeoutError) return timedOut(context, capability);
  if (error instanceof AnswerTooLarge)
    return new PlatformError('PAYLOAD_TOO_LARGE', `a gateway body is at most ${MAX_BODY} bytes`);
  if (error instanceof AnswerBrokenOff)
    return error.cause instanceof undiciErrors.BodyTimeoutError
      ? timedOut(context, capability)
      : new PlatformError('UPSTREAM_UNAVAILABLE', `${capability} broke off its answer`);
  if (
    error instanceof BoundedBody.TooLarge ||
    (error as { cause?: unknown }).cause instanceof BoundedBody.TooLarge
  )
    return tooLarge();
  return new PlatformError('UPSTREAM_UNAVAILABLE', `${capability} could not be reached`);
}

/** An upstream URL's origin and base path (without its trailing slash), parsed once. */
function upstreamOf(gateway: Gateway, url: string) {
  let parsed = gateway.upstreams.get(url);
  if (!parsed) {
    const { origin, pathname } = new URL(url);
    parsed = { origin, basePath: pathname.replace(/\/+$/, '') };
    gateway.upstreams.set(url, parsed);
  }
  return parsed;
}

const timedOut = (context: GatewayDeps, capability: string) =>
  new PlatformError(
    'UPSTREAM_TIMEOUT',
    `${capability} did not answer within ${context.config.gatewayTimeoutMs / 1000} s`,
  );

/** Whether the request carries a body (a length over the limit is refused before anything is read). */
function hasBody(request: FastifyRequest): boolean {
  const length = Number(request.headers['content-length'] ?? 0);
  if (length > MAX_BODY) throw tooLarge();
  return length > 0 || request.headers['transfer-encoding'] !== undefined;
}

const tooLarge = () => new PlatformError('PAYLOAD_TOO_LARGE', 'a gateway request’s body is at most 1 MiB');
