// What each error code means for the caller who got it: its usual cause and what to do, for the page each
// problem's `type` links to (/docs/errors). Typed by the catalogue, so a new code cannot go unexplained.
import type { ErrorCode } from '../lib/errors.ts';

export const ERROR_GUIDE: Record<ErrorCode, { cause: string; fix: string }> = {
  VALIDATION_FAILED: {
    cause:
      'A field of the body, the query or a path parameter is missing, of the wrong type or out of range; or the body is not valid JSON, or nests deeper than 64 levels.',
    fix: 'Read <code>errors</code>: each names the field (<code>pointer</code> or <code>parameter</code>) and what is wrong with it. Send bodies as <code>JSON.stringify</code> writes them.',
  },
  MALFORMED_REQUEST: {
    cause: 'The request is not well-formed HTTP: an invalid request line or header, or conflicting lengths.',
    fix: 'Use an HTTP client library rather than hand-written requests; check any proxy in between.',
  },
  IDEMPOTENCY_KEY_MISSING: {
    cause: 'Every write (POST, PUT, PATCH, DELETE) needs an <code>idempotency-key</code> header.',
    fix: 'Send a new unique key (a UUID) for each intended operation, and the same key when you retry it.',
  },
  IDEMPOTENCY_KEY_INVALID: {
    cause: 'The <code>idempotency-key</code> is empty, longer than 255 characters, or not visible ASCII.',
    fix: 'Use 1–255 visible ASCII characters: a UUID is ideal.',
  },
  WEBHOOK_URL_NOT_ALLOWED: {
    cause:
      'Endpoints must be public HTTPS addresses: <code>http://</code>, <code>localhost</code> and private or reserved IP addresses are refused, before any connection is made.',
    fix: 'Use a public <code>https://</code> URL. To deliver to a receiver on your own machine while developing, start the service with <code>PLATFORM_WEBHOOK_ALLOW_PRIVATE=1</code> (refused when <code>PLATFORM_ENV=prod</code>).',
  },
  WEBHOOK_ENDPOINT_LIMIT_REACHED: {
    cause: 'A project has at most 20 webhook endpoints.',
    fix: 'Delete an endpoint you no longer use, or subscribe one endpoint to more event types.',
  },
  USAGE_RANGE_INVALID: {
    cause:
      '<code>from</code> is after <code>to</code>, a date is not YYYY-MM-DD, or the range is longer than 92 days.',
    fix: 'Ask for at most 92 days, <code>from</code> ≤ <code>to</code>, both as UTC dates.',
  },
  EVENT_TYPE_LIMIT_REACHED: {
    cause: 'A project declares at most 1,000 event types, of at most 4 MiB of schemas together.',
    fix: 'Delete types you no longer publish (<code>DELETE /core/v1/event-types/{name}</code>).',
  },
  DELIVERY_NOT_RETRYABLE: {
    cause:
      'Only a dead delivery, or one waiting for its next attempt, can be retried; this one is delivered, cancelled or in flight.',
    fix: 'Check its state with the endpoint’s deliveries; to send the event again, replay it (<code>POST /core/v1/events/{id}/replay</code>).',
  },
  WEBHOOK_ENDPOINT_DISABLED: {
    cause:
      'The endpoint is disabled (<code>active: false</code>): deliveries to it cannot be retried or recovered.',
    fix: 'Enable it again with <code>PATCH /core/v1/webhook-endpoints/{id}</code> <code>{"active": true}</code>.',
  },
  EVENT_DISPATCH_IN_PROGRESS: {
    cause: 'The event’s first dispatch to its endpoints has not finished yet.',
    fix: 'Retry in a second: replaying is possible once the first dispatch is done.',
  },
  API_KEY_MISSING: {
    cause: 'No <code>x-api-key</code> header, or an empty one.',
    fix: 'Send the key in <code>x-api-key</code>. A first key is printed when the service first starts; <code>npx platform keys create --project dev --scopes all</code> makes another.',
  },
  API_KEY_INVALID: {
    cause:
      'The key is not one this service issued: mistyped, truncated, of another installation, or its mode (test or live) is not the project’s.',
    fix: 'Copy the key again as it was shown when it was made; keys are shown once, so make a new one if it is lost.',
  },
  API_KEY_REVOKED: {
    cause: 'The key was revoked (every process refuses it within 5 seconds).',
    fix: 'Use another key of the project, or have an operator create one.',
  },
  API_KEY_EXPIRED: {
    cause: 'The key’s <code>expiresAt</code> has passed.',
    fix: 'Use another key, or create one with a later expiry (or none).',
  },
  PORTAL_SESSION_EXPIRED: {
    cause: 'The portal session ended (its time ran out) or was revoked.',
    fix: 'Ask the project for a new portal link.',
  },
  INSUFFICIENT_SCOPE: {
    cause:
      'The key does not hold the scope the route needs (<code>requiredScope</code>), or it is the wrong kind of key: a project’s on <code>/admin/v1</code> or <code>/capability/v1</code>, an operator’s on <code>/core/v1</code>, a capability’s anywhere else. The detail says which.',
    fix: 'Use a key of the kind the route takes, holding <code>requiredScope</code>; keys’ scopes are set when they are made.',
  },
  CSRF_TOKEN_INVALID: {
    cause:
      'A write from the portal came without its session’s <code>x-csrf-token</code>, or with another one.',
    fix: 'Reload the portal: its pages send the token themselves.',
  },
  NOT_FOUND: {
    cause:
      'No such route, or no such resource in the key’s project (another project’s id answers the same, by design).',
    fix: 'Check the path and the id, and that the key belongs to the project that owns the resource.',
  },
  SLUG_TAKEN: {
    cause: 'Another project already has this slug.',
    fix: 'Choose another slug; slugs never change once taken.',
  },
  CAPABILITY_NAME_TAKEN: {
    cause: 'A capability with this name is already registered.',
    fix: 'Choose another name, or manage the existing one (<code>GET /admin/v1/capabilities/{name}</code>).',
  },
  RESERVATION_SETTLED: {
    cause: 'The reservation was released (it cannot be committed) or committed (it cannot be released).',
    fix: 'Nothing to do for a settled reservation: reserve again for new work.',
  },
  IDEMPOTENCY_KEY_IN_PROGRESS: {
    cause: 'A request with the same idempotency key is still being processed.',
    fix: 'Wait for <code>retry-after</code> (1 s) and send the same request again: you will get its answer.',
  },
  REQUEST_TIMEOUT: {
    cause: 'The request’s headers or body did not arrive in time.',
    fix: 'Send the whole request promptly; check for a stalled client or proxy.',
  },
  PAYLOAD_TOO_LARGE: {
    cause:
      'The body is over the route’s limit (the detail names it: 1 MiB in general, an event’s data 256 KiB).',
    fix: 'Send less: split the data, or reference large content by URL.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    cause:
      'The body is not <code>application/json</code> (merge patches may also be <code>application/merge-patch+json</code>).',
    fix: 'Send JSON with <code>content-type: application/json</code>.',
  },
  IDEMPOTENCY_KEY_REUSED: {
    cause:
      'This idempotency key was used within 24 hours for a different request (another body, route or id).',
    fix: 'Use a new key for each new operation; reuse a key only to retry the very same request.',
  },
  RATE_LIMITED: {
    cause: 'The key sent more requests a second than its rate allows.',
    fix: 'Wait for <code>retry-after</code>, and spread requests out (the <code>RateLimit</code> headers say what is left).',
  },
  USAGE_LIMIT_EXCEEDED: {
    cause: 'The project used its daily allowance of this metric (UTC day).',
    fix: 'Wait for <code>retry-after</code> (the next UTC day), or ask an operator to raise the project’s limit.',
  },
  HEADERS_TOO_LARGE: {
    cause: 'The request line (the URL) or the headers are too large.',
    fix: 'Shorten the URL and the headers; send data in the body.',
  },
  INTERNAL: {
    cause: 'A fault in the service: it is logged with the request id.',
    fix: 'Retry with the same idempotency key; if it persists, report the <code>requestId</code> to the operators.',
  },
  UPSTREAM_UNAVAILABLE: {
    cause:
      'The gateway could not reach the capability’s service (refused, reset, or its address could not be resolved).',
    fix: 'Retry later with the same idempotency key; operators: check the capability is up and its <code>upstream</code>.',
  },
  SERVICE_UNAVAILABLE: {
    cause: 'The service cannot reach its database for now, or is shutting down.',
    fix: 'Retry with the same idempotency key after a short wait; nothing was done.',
  },
  UPSTREAM_TIMEOUT: {
    cause:
      'The capability behind the gateway did not answer within its time (<code>PLATFORM_GATEWAY_TIMEOUT_MS</code>).',
    fix: 'Retry with the same idempotency key; operators: check the capability’s latency.',
  },
};
