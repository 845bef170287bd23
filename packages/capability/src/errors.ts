// The one error a call throws: the service's problem (an RFC 9457 PlatformError) as it answered it, or a
// call that got no answer (CONNECTION_FAILED, TIMEOUT) once its retries were spent.
import type { components } from './openapi.ts';

type Problem = components['schemas']['PlatformError'];

export type ErrorCode = Problem['code'] | 'CONNECTION_FAILED' | 'TIMEOUT';

export class PlatformError extends Error {
  override name = 'PlatformError';
  /** the HTTP status; 0 when no answer came */
  readonly status: number;
  readonly code: ErrorCode;
  /** the answer's x-request-id: quote it when reporting a problem */
  readonly requestId: string | null;
  readonly errors: NonNullable<Problem['errors']>;
  /** seconds the service asked to wait (retry-after) */
  readonly retryAfter: number | null;

  constructor(
    fields: {
      status: number;
      code: ErrorCode;
      detail: string;
      requestId?: string | null;
      errors?: Problem['errors'];
      retryAfter?: number | null;
    },
    options?: { cause?: unknown },
  ) {
    super(`${fields.code}: ${fields.detail}`, options);
    this.status = fields.status;
    this.code = fields.code;
    this.requestId = fields.requestId ?? null;
    this.errors = fields.errors ?? [];
    this.retryAfter = fields.retryAfter ?? null;
  }

  /** The error of an answer that is not a success: its problem, or what its status says. */
  static async of(response: Response): Promise<PlatformError> {
    const body = (await response.json().catch(() => undefined)) as Partial<Problem> | undefined;
    const retryAfter = Number(response.headers.get('retry-after'));
    return new PlatformError({
      status: response.status,
      code: body?.code ?? (response.status === 503 ? 'SERVICE_UNAVAILABLE' : 'INTERNAL'),
      detail: body?.detail ?? response.statusText,
      requestId: body?.requestId ?? response.headers.get('x-request-id'),
      errors: body?.errors,
      retryAfter: response.headers.has('retry-after') && Number.isFinite(retryAfter) ? retryAfter : null,
    });
  }

  /** Worth another try: no answer came, or the service said to come back (409 in progress, 503). */
  get retryable(): boolean {
    return this.status === 0 || this.status === 503 || this.code === 'IDEMPOTENCY_KEY_IN_PROGRESS';
  }
}
