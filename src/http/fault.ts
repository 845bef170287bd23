// Maps every error that is not already a PlatformError (Fastify's own, PostgreSQL's, anything else)
// to one. Expected failures get their 4xx; the database being unreachable is 503; the rest is INTERNAL.
import type { FastifyError } from 'fastify';
import { isUnavailable, pgCode } from '../db/database.ts';
import { type FieldError, PlatformError } from '../lib/errors.ts';

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** The PlatformError of any error; bodyLimit is the route's, for a 413 that names it. */
export function toPlatformError(error: FastifyError, bodyLimit?: number): PlatformError {
  // A path id of the wrong form names nothing: 404, as for an id of another project.
  if (error.validation && error.validationContext === 'params')
    return new PlatformError('NOT_FOUND', 'no such resource');
  if (error.validation) return validationError(error.validation as AjvError[], error.validationContext);
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PlatformError(
        'PAYLOAD_TOO_LARGE',
        bodyLimit ? `the request body is over ${sizeOf(bodyLimit)}, this route's limit` : undefined,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new PlatformError('UNSUPPORTED_MEDIA_TYPE', 'send the body as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new PlatformError(
        'VALIDATION_FAILED',
        'the body is empty but content-type says application/json',
      );
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new PlatformError('VALIDATION_FAILED', 'the body is not valid JSON');
  }
  if (isUnavailable(error)) return new PlatformError('SERVICE_UNAVAILABLE', 'the database is unreachable');
  // PostgreSQL class 22 (data exception), e.g. a NUL character in text: the input, not the service.
  if (/^22[0-9A-Z]{3}$/.test(pgCode(error) ?? '')) {
    return new PlatformError(
      'VALIDATION_FAILED',
      'a value in the request cannot be stored (for example a NUL character)',
    );
  }
  if (error.statusCode === 400 || error instanceof SyntaxError) {
    return new PlatformError('VALIDATION_FAILED', 'the request is malformed');
  }
  if (error.statusCode === 413) return new PlatformError('PAYLOAD_TOO_LARGE');
  if (error.statusCode === 415) return new PlatformError('UNSUPPORTED_MEDIA_TYPE');
  return new PlatformError('INTERNAL', 'an unexpected error occurred; quote the requestId when reporting it');
}

function validationError(issues: AjvError[], context: string | undefined): PlatformError {
  const errors = issues.map((issue): FieldError => {
    // A missing or an unexpected member is pointed at by its own name.
    const member = issue.params.missingProperty ?? issue.params.additionalProperty;
    const location = `${issue.instancePath}${member === undefined ? '' : `/${String(member)}`}`;
    const detail =
      issue.keyword === 'additionalProperties'
        ? 'is not a member of this request'
        : (issue.message ?? issue.keyword);
    if (context === 'body') return { pointer: location || '/', detail };
    return { parameter: location.replace(/^\//, '') || (context ?? 'request'), detail };
  });
  const where = context === 'querystring' ? 'query' : (context ?? 'request');
  return new PlatformError('VALIDATION_FAILED', `the ${where} is not valid`, { errors });
}

/** A byte count as a reader says it: 320 KiB, 1 MiB. */
const sizeOf = (bytes: number) =>
  bytes % 1048576 === 0 ? `${bytes / 1048576} MiB` : `${Math.round(bytes / 1024)} KiB`;
