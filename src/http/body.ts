// Request bodies: JSON only (and JSON merge patches), parsed with Fastify's own parser (which refuses
// __proto__ and constructor.prototype keys), after a scan that bounds their nesting, so that no body can
// drive a recursive helper (the idempotency fingerprint, a schema, PostgreSQL's jsonb) into a stack overflow.
// Any other content type on a route with a body is 415 (Fastify's text/plain parser is removed).
import type { FastifyInstance } from 'fastify';
import { PlatformError } from '../errors.ts';

/** How deep objects and arrays may nest in a request body; documented in the README. */
export const MAX_BODY_DEPTH = 64;

export const JSON_TYPES = ['application/json', 'application/merge-patch+json'];

/** Whether JSON text nests deeper than `max` (a scan of brackets outside strings, linear in the text). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

export function registerBodyParsers(app: FastifyInstance) {
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(JSON_TYPES, { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    // An empty body is "no body", so a client may send content-type: application/json on body-less POSTs.
    if (text === '') return done(null, undefined);
    if (nestsDeeperThan(text, MAX_BODY_DEPTH)) {
      return done(
        new PlatformError('VALIDATION_FAILED', `the body nests deeper than ${MAX_BODY_DEPTH} levels`, {
          errors: [{ pointer: '/', detail: `objects and arrays nest at most ${MAX_BODY_DEPTH} levels deep` }],
        }),
        undefined,
      );
    }
    parseJson(request, text, done);
  });
}
