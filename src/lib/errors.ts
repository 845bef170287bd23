// One error model: every failure leaves as an RFC 9457 problem (PlatformError) with a stable `code`.
// The catalogue below is the single list of codes; the docs page and the OpenAPI schema read it too.
// Domain code raises these; http/ renders them (and maps every other error to one, see http/fault.ts).

export const ERROR_CATALOGUE = {
  VALIDATION_FAILED: { status: 400, title: 'The request is not valid' },
  MALFORMED_REQUEST: { status: 400, title: 'The request is not well-formed HTTP' },
  IDEMPOTENCY_KEY_MISSING: { status: 400, title: 'The idempotency-key header is required' },
  IDEMPOTENCY_KEY_INVALID: { status: 400, title: 'The idempotency-key header is not valid' },
  WEBHOOK_URL_NOT_ALLOWED: { status: 400, title: 'The webhook address is not a public HTTPS address' },
  WEBHOOK_ENDPOINT_LIMIT_REACHED: { status: 400, title: 'The project already has 20 webhook endpoints' },
  USAGE_RANGE_INVALID: { status: 400, title: 'The usage date range is not valid' },
  EVENT_TYPE_LIMIT_REACHED: { status: 400, title: 'The project’s event-type catalogue is full' },
  DELIVERY_NOT_RETRYABLE: { status: 400, title: 'The delivery cannot be retried' },
  WEBHOOK_ENDPOINT_DISABLED: { status: 400, title: 'The webhook endpoint is disabled' },
  EVENT_DISPATCH_IN_PROGRESS: {
    status: 400,
    title: 'The event is still being dispatched for the first time',
  },
  API_KEY_MISSING: { status: 401, title: 'The x-api-key header is missing' },
  API_KEY_INVALID: { status: 401, title: 'The API key is not valid' },
  API_KEY_REVOKED: { status: 401, title: 'The API key has been revoked' },
  API_KEY_EXPIRED: { status: 401, title: 'The API key has expired' },
  PORTAL_SESSION_EXPIRED: { status: 401, title: 'The portal session has expired or was revoked' },
  INSUFFICIENT_SCOPE: { status: 403, title: 'The API key lacks the scope this route needs' },
  CSRF_TOKEN_INVALID: { status: 403, title: 'A portal write must carry its session’s x-csrf-token' },
  NOT_FOUND: { status: 404, title: 'Not found' },
  SLUG_TAKEN: { status: 409, title: 'A project with this slug already exists' },
  CAPABILITY_NAME_TAKEN: { status: 409, title: 'A capability with this name already exists' },
  RESERVATION_SETTLED: { status: 409, title: 'The reservation was committed or released already' },
  IDEMPOTENCY_KEY_IN_PROGRESS: {
    status: 409,
    title: 'A request with this idempotency key is still being processed',
  },
  REQUEST_TIMEOUT: { status: 408, title: 'The request was not received in time' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'The request body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'The content type is not supported' },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    title: 'This idempotency key was already used with a different request',
  },
  RATE_LIMITED: { status: 429, title: 'Too many requests' },
  USAGE_LIMIT_EXCEEDED: { status: 429, title: 'The daily usage limit is reached' },
  HEADERS_TOO_LARGE: { status: 431, title: 'The request line or headers are too large' },
  INTERNAL: { status: 500, title: 'Internal error' },
  UPSTREAM_UNAVAILABLE: { status: 502, title: 'The capability behind the gateway could not be reached' },
  SERVICE_UNAVAILABLE: { status: 503, title: 'The service is unavailable' },
  UPSTREAM_TIMEOUT: { status: 504, title: 'The capability behind the gateway did not answer in time' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface FieldError {
  /** JSON pointer into the body, for body fields */
  pointer?: string;
  /** name of the query or path parameter, or header */
  parameter?: string;
  detail: string;
}

export interface PlatformErrorOptions {
  errors?: FieldError[];
  requiredScope?: string;
  headers?: Record<string, string>;
}

export class PlatformError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly options: PlatformErrorOptions;

  constructor(code: ErrorCode, detail?: string, options: PlatformErrorOptions = {}) {
    super(detail ?? ERROR_CATALOGUE[code].title);
    this.code = code;
    this.status = ERROR_CATALOGUE[code].status;
    this.options = options;
  }
}

export const notFound = (what: string) => new PlatformError('NOT_FOUND', `${what} not found`);

/** Where each code is explained: a page this service serves, with one anchor per code. */
export const errorTypeUrl = (code: ErrorCode) => `/docs/errors#${code}`;

export function problemBody(error: PlatformError, requestId: string) {
  return {
    type: errorTypeUrl(error.code),
    title: ERROR_CATALOGUE[error.code].title,
    status: error.status,
    detail: error.message,
    code: error.code,
    requestId,
    ...(error.options.errors ? { errors: error.options.errors } : {}),
    ...(error.options.requiredScope ? { requiredScope: error.options.requiredScope } : {}),
  };
}

/** A setting that cannot be used as given: the process says which and stops (config.ts, crypto.ts). */
export class ConfigError extends Error {}
