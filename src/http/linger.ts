// A 413 answered before the body was read (its declared length is over the route's limit): the client
// is still writing. Closing at once (as Fastify asks, with `connection: close`) resets the connection
// under the client's writes, and a client that gets EPIPE on its write never reads the 413 waiting for
// it. As nginx's lingering close does, the body is read and dropped instead, bounded in bytes and in
// time, and the connection then serves the client's next request. Beyond the bounds (a body declared
// larger than LINGER_BYTES, or a chunked one with no length) the connection closes at once, as before.
import type { FastifyReply, FastifyRequest } from 'fastify';

/** the most a refused body is read for, to be dropped */
const LINGER_BYTES = 64 * 1024 * 1024;
/** how long its client has to finish sending it */
const LINGER_MS = 10_000;

export function lingerAfterRefusal(request: FastifyRequest, reply: FastifyReply) {
  const length = Number(request.headers['content-length']);
  if (request.raw.complete || !(length <= LINGER_BYTES)) return;
  reply.removeHeader('connection'); // Node drops the unread body and keeps the connection open
  reply.raw.once('finish', () => {
    if (request.raw.complete) return;
    const timer = setTimeout(() => request.raw.socket?.destroy(), LINGER_MS);
    timer.unref();
    request.raw.once('end', () => clearTimeout(timer));
    request.raw.once('close', () => clearTimeout(timer));
  });
}
