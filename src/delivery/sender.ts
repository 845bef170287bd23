// The outbound side of deliveries: one undici Agent (keep-alive per origin), its connector guarded by the
// webhook address policy on every connection. An IP literal is checked before its socket opens, names are
// resolved through the policy (a name that resolves inward is refused before anything is sent), and the
// address actually dialled is checked again once connected, so neither can turn a delivery inward. Redirects are not
// followed; the response is read up to 4 KiB.
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { LRUCache } from 'lru-cache';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { checkAddress, type Resolver } from '../webhooks/address-policy.ts';
import type { Credentials, Destination, Outgoing, SendResult } from './destination.ts';
import { OAuthTokens, TokenError } from './oauth.ts';

export const RESPONSE_CAPTURE_BYTES = 4096;

export class AddressRefused extends Error {}

/**
 * An undici Agent whose every connection obeys the webhook address policy: an IP literal is judged
 * before its socket opens, a name through the resolver, and the address actually dialled once connected.
 * Deliveries use one; so does anything else the service fetches from an address a project gave.
 */
export function guardedAgent(options: {
  allowPrivate: boolean;
  resolve: Resolver;
  timeoutMs: number;
  connections?: number;
  /** a client certificate and its key, presented to every server (mutual TLS) */
  clientCertificate?: { cert: string; key: string };
}): Agent {
  const { allowPrivate, resolve, timeoutMs } = options;

  // net/tls call this for host names (never for IP literals, which the connector below checks).
  const lookup = (
    hostname: string,
    lookupOptions: { all?: boolean },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    resolve(hostname).then(
      (addresses) => {
        if (!allowPrivate) {
          for (const address of addresses) {
            const verdict = checkAddress(address);
            if (!verdict.allowed)
              return callback(new AddressRefused(`refused: ${hostname} resolves to ${verdict.reason}`), []);
          }
        }
        if (addresses.length === 0) return callback(new Error(`${hostname} does not resolve`), []);
        const entries = addresses.map((address) => ({ address, family: isIP(address) }));
        if (lookupOptions.all) callback(null, entries);
        else callback(null, entries[0]?.address ?? '', entries[0]?.family);
      },
      (error: Error) => callback(error, []),
    );
  };

  const connect = buildConnector({
    timeout: timeoutMs,
    lookup,
    ...options.clientCertificate,
  } as buildConnector.BuildOptions);
  return new Agent({
    connect: (connectOptions, callback) => {
      // An IP literal is judged before any socket opens (names are judged by the lookup above).
      const literal = connectOptions.hostname.replace(/^\[|\]$/g, '');
      if (!allowPrivate && isIP(literal)) {
        const verdict = checkAddress(literal);
        if (!verdict.allowed) return callback(new AddressRefused(`refused: ${verdict.reason}`), null);
      }
      connect(connectOptions, (error, socket) => {
        if (error || !socket) return callback(error ?? new Error('no socket'), null);
        const dialled = socket.remoteAddress ?? '';
        const verdict = allowPrivate
          ? { allowed: true as const }
          : checkAddress(dialled.replace(/^::ffff:(?=\d)/, ''));
        if (!verdict.allowed) {
          socket.destroy();
          return callback(new AddressRefused(`refused at connect: ${verdict.reason}`), null);
        }
        callback(null, socket);
      });
    },
    keepAliveTimeout: 30_000,
    connections: options.connections ?? 64, // per origin
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
}

/** The webhook destination: an HTTPS POST of each delivery, on one guarded agent. */
export function webhookDestination(options: {
  allowPrivate: boolean;
  resolve: Resolver;
  timeoutMs: number;
  userAgent: string;
}): Destination {
  const agent = guardedAgent(options);
  const tokens = new OAuthTokens(agent, options.timeoutMs);
  // An endpoint with a client certificate has an agent of its own (its connections present it), kept
  // while its certificate is the same, closed when it leaves.
  const certified = new LRUCache<string, { certificate: string; agent: Agent }>({
    max: 1000,
    dispose: (entry) => void entry.agent.close().catch(() => {}),
  });
  const agentOf = (endpointId: string, tls: NonNullable<Credentials['tls']>) => {
    const held = certified.get(endpointId);
    if (held?.certificate === tls.certificate) return held.agent;
    const clientCertificate = { cert: tls.certificate, key: tls.privateKey };
    const own = guardedAgent({ ...options, clientCertificate, connections: 8 });
    certified.set(endpointId, { certificate: tls.certificate, agent: own });
    return own;
  };
  const fixed = { 'content-type': 'application/json', 'user-agent': options.userAgent };
  const send = (outgoing: Outgoing): Promise<SendResult> => {
    const { url, headers, extra, body, credentials } = outgoing;
    // An endpoint's own headers go first: the transport's and the signature's are never theirs to set.
    const all = extra
      ? { ...fixed, ...extra, ...headers, 'content-type': fixed['content-type'] }
      : { ...headers, ...fixed };
    if (!credentials) return post(agent, url, all, body, options.timeoutMs);
    const through = credentials.tls ? agentOf(outgoing.endpointId, credentials.tls) : agent;
    const { oauth } = credentials;
    if (!oauth) return post(through, url, all, body, options.timeoutMs);
    const withToken = async (renew: boolean) => {
      const token = await tokens.token(outgoing.endpointId, oauth, renew);
      return post(through, url, { ...all, authorization: `Bearer ${token}` }, body, options.timeoutMs);
    };
    // A 401 may be a token the receiver no longer takes: one more try with a new one.
    return withToken(false)
      .then((result) => (result.statusCode === 401 ? withToken(true) : result))
      .catch((error: unknown) => {
        if (!(error instanceof TokenError)) throw error;
        return {
          delivered: false,
          statusCode: null,
          error: error.message,
          responseBody: null,
          durationMs: 0,
          retryAfter: null,
        };
      });
  };
  return {
    send,
    close: async () => {
      certified.clear();
      await agent.close();
    },
  };
}

/** Aborts a response once its first RESPONSE_CAPTURE_BYTES are read: the rest is not wanted. */
class Captured extends Error {}

/**
 * One POST through undici's dispatcher, its answer gathered by a handler (Attempt). undici's `request`
 * wraps the same dispatch in a response stream and an abort signal, which cost a quarter more CPU a send
 * (docs/decisions/sender-dispatcher.md; npm run bench -- sender).
 */
function post(
  agent: Agent,
  url: string,
  headers: Record<string, string>,
  body: string | Buffer,
  timeoutMs: number,
): Promise<SendResult> {
  return new Promise((resolve) => {
    const attempt = new Attempt(resolve, timeoutMs);
    try {
      const { origin, pathname, search } = new URL(url);
      agent.dispatch({ origin, path: pathname + search, method: 'POST', headers, body }, attempt);
    } catch (error) {
      attempt.onResponseError(undefined, error as Error);
    }
  });
}

/**
 * An attempt's answer, from undici's callbacks: its status, its retry-after, the start of its body. It
 * is bounded by `timeoutMs` from the moment it is asked for, waiting for a connection included.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private readonly started = performance.now();
  private readonly done: (result: SendResult) => void;
  private timer: NodeJS.Timeout | undefined;
  private controller: Dispatcher.DispatchController | undefined;
  private statusCode = 0;
  private retryAfter: string | string[] | undefined;
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(done: (result: SendResult) => void, timeoutMs: number) {
    this.done = done;
    this.timer = setTimeout(() => {
      const timeout = new DOMException('the attempt timed out', 'TimeoutError');
      this.controller?.abort(timeout);
      this.finish(timeout); // when still waiting for a connection, there is nothing to abort yet
    }, timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController) {
    this.controller = controller;
    if (this.timer === undefined) controller.abort(new Error('timed out')); // while it waited
  }

  onResponseStart(
    _controller: unknown,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ) {
    this.statusCode = statusCode;
    this.retryAfter = headers['retry-after'];
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer) {
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size >= RESPONSE_CAPTURE_BYTES) controller.abort(new Captured());
  }

  onResponseEnd() {
    this.finish(null);
  }

  onResponseError(_controller: unknown, error: Error) {
    this.finish(error instanceof Captured ? null : error);
  }

  /** Answers once: with the response (error null), or with what went wrong. */
  private finish(error: unknown) {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const durationMs = Math.round(performance.now() - this.started);
    if (error !== null) {
      this.done({
        delivered: false,
        statusCode: null,
        error: describe(error),
        responseBody: null,
        durationMs,
        retryAfter: null,
      });
      return;
    }
    const code = this.statusCode;
    this.done({
      delivered: code >= 200 && code < 300,
      statusCode: code,
      error: code >= 300 && code < 400 ? `redirect (${code}) not followed` : null,
      responseBody: Buffer.concat(this.chunks).subarray(0, RESPONSE_CAPTURE_BYTES).toString('utf8'),
      durationMs,
      retryAfter: code === 429 || code === 503 ? parseRetryAfter(this.retryAfter) : null,
    });
  }
}

function parseRetryAfter(value: string | string[] | undefined): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return null;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim());
  const date = Date.parse(raw);
  return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000);
}

function describe(error: unknown): string {
  if (error instanceof AddressRefused) return error.message;
  const e = error as { name?: string; code?: string; message?: string; cause?: unknown };
  if (
    e.name === 'TimeoutError' ||
    e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e.code === 'UND_ERR_BODY_TIMEOUT'
  ) {
    return 'timed out';
  }
  if (e.cause instanceof AddressRefused) return e.cause.message;
  return `${e.code ?? e.name ?? 'error'}: ${e.message ?? String(error)}`.slice(0, 500);
}
