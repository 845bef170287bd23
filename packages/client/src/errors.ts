// The one error a call throws: the service's problem (RFC 9457 PlatformError) as it answered it, or a
// call that got no answer (CONNECTION_FAILED, TIMEOUT) once its retries were spent.
import type { components } from './openapi.ts';

type Problem = components['schemas']['PlatformError'];

/** The service's codes (see its /docs/errors), and the two of a call that got no answer. */
export type ErrorCode = Problem['code'] | 'CONNECTION_FAILED' | 'TIMEOUT';

export type FieldError = NonNullable<Problem['errors']>[number];

export class PlatformError extends Error {
  override name = 'PlatformError';
  /** the HTTP status; 0 when no answer came */
  readonly status: number;
  readonly code: ErrorCode;
  /** the service's x-request-id of the answer: quote it when reporting a problem */
  readonly requestId: string | null;
  /** what was wrong with which member or parameter, on a 400 */
  readonly errors: FieldError[];
  /** the scope the key lacks, on a 403 */
  readonly requiredScope: string | null;
  /** seconds the service asked to wait (retry-after), when it did */
  readonly retryAfter: number | null;

  constructor(
    fields: {
      status: number;
      code: ErrorCode;
      detail: string;
      requestId?: string | null;
      errors?: FieldError[];
      requiredScope?: string | null;
      retryAfter?: number | null;
    },
    options?: { cause?: unknown },
  ) {
    super(`${fields.code}: ${fields.detail}`, options);
    this.status = fields.status;
    this.code = fields.code;
    this.requestId = fields.requestId ?? null;
    this.errors = fields.errors ?? [];
    this.requiredScope = fields.requiredScope ?? null;
    this.retryAfter = fields.retryAfter ?? null;
  }

  /** The error of an answer that is not a success: its problem body, or what the status says. */
  static async of(response: Response): Promise<PlatformError> {
    const body = (await response.json().catch(() => undefined)) as Partial<Problem> | undefined;
    const retryAfter = Number(response.headers.get('retry-after'));
    return new PlatformError({
      status: response.status,
      code: body?.code ?? (response.status === 503 ? 'SERVICE_UNAVAILABLE' : 'INTERNAL'),
      detail: body?.detail ?? response.statusText,
      requestId: body?.requestId ?? response.headers.get('x-request-id'),
      errors: body?.errors,
      requiredScope: body?.requiredScope,
      retryAfter: response.headers.has('retry-after') && Number.isFinite(retryAfter) ? retryAfter : null,
    });
  }
}
