// The outbound side of deliveries: one undici Agent (keep-alive per origin), its connector guarded by the
// webhook address policy on every connection. An IP literal is checked before its socket opens, names are
// resolved through the policy (a name that resolves inward is refused before anything is sent), and the
// address actually dialled is checked again once connected, so neither can turn a delivery inward. Redirects are not
// followed; the response is read up to 4 KiB.
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import { checkAddress, type Resolver } from '../webhooks/address-policy.ts';

export const RESPONSE_CAPTURE_BYTES = 4096;

export interface SendResult {
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  durationMs: number;
  /** seconds, from a retry-after header on 429 or 503 */
  retryAfter: number | null;
}

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

  const connect = buildConnector({ timeout: timeoutMs, lookup } as buildConnector.BuildOptions);
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

export function createSender(options: {
  allowPrivate: boolean;
  resolve: Resolver;
  timeoutMs: number;
  userAgent: string;
}) {
  const { timeoutMs } = options;
  const agent = guardedAgent(options);

  return {
    async send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      try {
        const response = await request(url, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', 'user-agent': options.userAgent },
          body,
          dispatcher: agent,
          signal: AbortSignal.timeout(timeoutMs),
        });
        const responseBody = await readCapped(response.body);
        const { statusCode } = response;
        const retryAfter =
          statusCode === 429 || statusCode === 503 ? parseRetryAfter(response.headers['retry-after']) : null;
        const redirect =
          statusCode >= 300 && statusCode < 400 ? `redirect (${statusCode}) not followed` : null;
        return { statusCode, error: redirect, responseBody, durationMs: elapsed(), retryAfter };
      } catch (error) {
        return {
          statusCode: null,
          error: describe(error),
          responseBody: null,
          durationMs: elapsed(),
          retryAfter: null,
        };
      }
    },
    close: () => agent.close(),
  };
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= RESPONSE_CAPTURE_BYTES) break; // leaving the loop destroys the rest of the stream
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_CAPTURE_BYTES).toString('utf8');
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
