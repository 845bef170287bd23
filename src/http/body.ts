// Request bodies: JSON only (and JSON merge patches), parsed with Fastify's own parser (which refuses
// __proto__ and constructor.prototype keys), after a scan that bounds their nesting, so that no body can
// drive a recursive helper (the idempotency fingerprint, a schema, PostgreSQL) into a stack overflow. The
// text is kept on the request: a publish delivers its data as written (json-text.ts).
// Any other content type on a route with a body is 415 (Fastify's text/plain parser is removed).
import type { FastifyInstance } from 'fastify';
import { PlatformError } from '../lib/errors.ts';
import { nestsDeeperThan } from '../lib/json-text.ts';

/** How deep objects and arrays may nest in a request body; documented in docs/api.md. */
export const MAX_BODY_DEPTH = 64;

export const JSON_TYPES = ['application/json', 'application/merge-patch+json'];

declare module 'fastify' {
  interface FastifyRequest {
    /** the JSON body's text as received ('' without one) */
    bodyText: string;
  }
}

export function registerBodyParsers(app: FastifyInstance) {
  app.decorateRequest('bodyText', '');
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(JSON_TYPES, { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    // An empty body is "no body", so a client may send content-type: application/json on body-less POSTs.
    if (text === '') return done(null, undefined);
    if (nestsDeeperThan(text, MAX_BODY_DEPTH)) {
      const detail = `objects and arrays nest at most ${MAX_BODY_DEPTH} levels deep`;
      return done(
        new PlatformError('VALIDATION_FAILED', `the body nests deeper than ${MAX_BODY_DEPTH} levels`, {
          errors: [{ pointer: '/', detail }],
        }),
        undefined,
      );
    }
    request.bodyText = text;
    parseJson(request, text, done);
  });
}
