// Errors Node's HTTP parser raises before any request exists (a garbage request line, control bytes or
// a smuggling attempt in the headers, headers over 16 KiB, a client too slow to send them): answered in
// the contract's shape like every other error, a problem body with a code and an x-request-id, on a
// connection then closed (Node's own answer is a bare status line).
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { PlatformError, problemBody } from '../lib/errors.ts';

/** The PlatformError for a parser error code (llhttp's HPE_*, or Node's request time-outs). */
export function clientFailure(code: string | undefined): PlatformError {
  if (code === 'HPE_HEADER_OVERFLOW')
    return new PlatformError(
      'HEADERS_TOO_LARGE',
      'the request line and headers are over 16 KiB, or too many',
    );
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'HPE_HEADERS_TIMEOUT')
    return new PlatformError('REQUEST_TIMEOUT', 'the request was not sent in time');
  return new PlatformError('MALFORMED_REQUEST', `the request is not well-formed HTTP (${code ?? 'unknown'})`);
}

export function clientErrorHandler(log: Logger) {
  return (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const requestId = randomUUID();
    const failure = clientFailure(error.code);
    log.info({ requestId, code: failure.code, parserError: error.code }, 'malformed request refused');
    const body = JSON.stringify(problemBody(failure, requestId));
    socket.end(
      [
        `HTTP/1.1 ${failure.status} ${STATUS_CODES[failure.status]}`,
        'content-type: application/problem+json',
        `content-length: ${Buffer.byteLength(body)}`,
        `x-request-id: ${requestId}`,
        'x-content-type-options: nosniff',
        'cache-control: no-store',
        'connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  };
}
