// Trusting what the gateway forwards: a request that reached a capability through platform-core's gateway
// carries the caller's project, key and scopes in x-platform-* headers, signed with the capability's
// signing secrets (HMAC-SHA256 over `<request-id>.<timestamp>.<METHOD>.<path and query>.<project-id>.
// <key-id>.<scopes>`, one `v1,<base64>` per secret). Web Crypto only; a Fastify hook and an Express
// middleware wrap the check.

export class GatewayVerificationError extends Error {
  override name = 'GatewayVerificationError';
}

/** Who is calling, as the gateway vouches for it. */
export interface GatewayCaller {
  projectId: string;
  keyId: string;
  scopes: string[];
  requestId: string;
  timestamp: number;
}

export interface GatewayRequest {
  method: string;
  /** the path and query string as received (`/v1/messages?x=1`, with any base path) */
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface GatewayVerifyOptions {
  /** how far the signed timestamp may be from now, in seconds (default 300) */
  toleranceSeconds?: number;
  now?: Date;
}

const encoder = new TextEncoder();

const one = (headers: GatewayRequest['headers'], name: string) => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** Checks a forwarded request's context headers against the capability's signing secrets. */
export async function verifyGatewayRequest(
  request: GatewayRequest,
  secrets: string | readonly string[],
  options: GatewayVerifyOptions = {},
): Promise<GatewayCaller> {
  const h = (name: string) => one(request.headers, `x-platform-${name}`) ?? '';
  const [projectId, keyId, scopes, requestId, timestamp, signature] = [
    'project-id',
    'key-id',
    'scopes',
    'request-id',
    'timestamp',
    'signature',
  ].map(h) as [string, string, string, string, string, string];
  if (!projectId || !keyId || !requestId || !/^\d{1,12}$/.test(timestamp) || !signature)
    throw new GatewayVerificationError('the x-platform-* headers are missing or malformed');
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300))
    throw new GatewayVerificationError('x-platform-timestamp is outside the tolerance');
  const signed = encoder.encode(
    [requestId, timestamp, request.method.toUpperCase(), request.url, projectId, keyId, scopes].join('.'),
  );
  const received = signature
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => fromBase64(entry.slice(3)));
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    const key = await crypto.subtle.importKey(
      'raw',
      secretBytes(secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['verify'],
    );
    for (const bytes of received) {
      // Web Crypto's verify compares in constant time.
      if (bytes && (await crypto.subtle.verify('HMAC', key, bytes, signed)))
        return {
          projectId,
          keyId,
          scopes: scopes ? scopes.split(',') : [],
          requestId,
          timestamp: Number(timestamp),
        };
    }
  }
  throw new GatewayVerificationError('no signature matches any of the secrets');
}

function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  const bytes = fromBase64(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  if (!bytes || bytes.length === 0) throw new GatewayVerificationError('a secret is not whsec_ and base64');
  return bytes;
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return undefined;
  }
}

/** The minimum of a Fastify request and reply the hook uses (no dependency on Fastify itself). */
interface FastifyLike {
  request: {
    method: string;
    raw: { url?: string };
    headers: GatewayRequest['headers'];
    platform?: GatewayCaller;
  };
  reply: { code(status: number): { send(body: unknown): unknown } };
}

/**
 * A Fastify preHandler hook: sets `request.platform` to the caller, or answers 401. Declare `platform` on
 * FastifyRequest to read it typed.
 */
export function fastifyGateway(secrets: string | readonly string[], options?: GatewayVerifyOptions) {
  return async (request: FastifyLike['request'], reply: FastifyLike['reply']) => {
    try {
      request.platform = await verifyGatewayRequest(
        { method: request.method, url: request.raw.url ?? '', headers: request.headers },
        secrets,
        options,
      );
    } catch (error) {
      if (!(error instanceof GatewayVerificationError)) throw error;
      return reply.code(401).send({ error: error.message });
    }
  };
}

/** An Express middleware: sets `req.platform` to the caller, or answers 401. */
export function expressGateway(secrets: string | readonly string[], options?: GatewayVerifyOptions) {
  return (
    req: {
      method: string;
      originalUrl?: string;
      url?: string;
      headers: GatewayRequest['headers'];
      platform?: GatewayCaller;
    },
    res: { status(code: number): { json(body: unknown): unknown } },
    next: (error?: unknown) => void,
  ) => {
    verifyGatewayRequest(
      { method: req.method, url: req.originalUrl ?? req.url ?? '', headers: req.headers },
      secrets,
      options,
    )
      .then((caller) => {
        req.platform = caller;
        next();
      })
      .catch((error: unknown) =>
        error instanceof GatewayVerificationError
          ? res.status(401).json({ error: error.message })
          : next(error),
      );
  };
}
