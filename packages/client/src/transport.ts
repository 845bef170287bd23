// One call to the service, as every method makes it: the key, an idempotency key on every write (the same
// on each of its retries, so a retry can never make a second effect), a timeout per attempt, and retries
// with exponential backoff and full jitter when no answer came or the service said to come back (409
// in progress, 429 rate limited, 503), waiting what its retry-after says.
import { PlatformError } from './errors.ts';
import type { paths } from './openapi.ts';

export interface ClientOptions {
  /** the key: a project's (pk_test_…, pk_live_…) for PlatformClient, an operator's for PlatformAdminClient */
  apiKey: string;
  /** where the service is, e.g. https://platform.internal.example.com */
  baseUrl: string;
  /** each attempt's time limit (default 30 000 ms) */
  timeoutMs?: number;
  /** retries after the first attempt (default 2; 0 turns them off) */
  maxRetries?: number;
  /** the first retry's backoff ceiling (default 500 ms), doubled on each retry */
  retryDelayMs?: number;
  /** the longest wait before a retry (default 10 000 ms): a longer retry-after is not waited for */
  maxRetryDelayMs?: number;
  /** another fetch (a proxy's, a test's); the platform's by default */
  fetch?: typeof fetch;
}

export interface CallOptions {
  /** a write's idempotency key; one is made when not given (keep it to retry the write yourself later) */
  idempotencyKey?: string;
  /** aborts the call, retries included */
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRetries?: number;
}

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Json<Response> = Response extends { content: { 'application/json': infer Body } } ? Body : undefined;
type Operation<Path extends keyof paths, M extends Method> = NonNullable<paths[Path][M]>;

/** What an operation answers on success. */
export type Result<Path extends keyof paths, M extends Method> =
  Operation<Path, M> extends { responses: infer Responses }
    ? Responses extends { 200: infer Ok }
      ? Json<Ok>
      : Responses extends { 201: infer Created }
        ? Json<Created>
        : Responses extends { 202: infer Accepted }
          ? Json<Accepted>
          : undefined
    : never;

/** The JSON body an operation takes. */
export type Body<Path extends keyof paths, M extends Method> = Json<Operation<Path, M>['requestBody']>;

/** The query parameters an operation takes. */
export type Query<Path extends keyof paths, M extends Method> = NonNullable<
  Operation<Path, M>['parameters']['query']
>;

interface Input {
  /** the path's {names} */
  params?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });

export class Transport {
  readonly #options: Required<Omit<ClientOptions, 'fetch'>> & { fetch: typeof fetch };

  constructor(options: ClientOptions) {
    if (!options.apiKey) throw new TypeError('apiKey is required');
    if (!/^https?:\/\//.test(options.baseUrl ?? '')) throw new TypeError('baseUrl must be an http(s) URL');
    this.#options = {
      timeoutMs: 30_000,
      maxRetries: 2,
      retryDelayMs: 500,
      maxRetryDelayMs: 10_000,
      ...options,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    };
  }

  async call<Path extends keyof paths, M extends Method>(
    method: M,
    path: Path,
    input: Input = {},
    options: CallOptions = {},
  ): Promise<Result<Path, M>> {
    const url = this.#url(path, input);
    const headers: Record<string, string> = { 'x-api-key': this.#options.apiKey, accept: 'application/json' };
    if (method !== 'get') headers['idempotency-key'] = options.idempotencyKey ?? crypto.randomUUID();
    if (input.body !== undefined)
      headers['content-type'] = method === 'patch' ? 'application/merge-patch+json' : 'application/json';
    const body = input.body === undefined ? undefined : JSON.stringify(input.body);
    const maxRetries = options.maxRetries ?? this.#options.maxRetries;

    for (let attempt = 0; ; attempt++) {
      const failure = await this.#attempt(url, { method: method.toUpperCase(), headers, body }, options);
      if (!(failure instanceof PlatformError)) return failure as Result<Path, M>;
      const delay = attempt < maxRetries ? this.#retryDelay(failure, attempt) : undefined;
      if (delay === undefined) throw failure;
      await sleep(delay, options.signal);
    }
  }

  /** One attempt: the answer's body on success, else the error it makes. */
  async #attempt(url: string, init: RequestInit, options: CallOptions): Promise<unknown> {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? this.#options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    try {
      const response = await this.#options.fetch(url, { ...init, signal });
      if (!response.ok) return await PlatformError.of(response);
      return response.status === 204 ? undefined : await response.json();
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason; // the caller's own abort ends the call
      const timedOut = timeout.aborted;
      return new PlatformError(
        {
          status: 0,
          code: timedOut ? 'TIMEOUT' : 'CONNECTION_FAILED',
          detail: timedOut ? 'no answer within the time limit' : `no answer: ${String(error)}`,
        },
        { cause: error },
      );
    }
  }

  /** How long to wait before retrying after this failure; undefined when it is not to be retried. */
  #retryDelay(failure: PlatformError, attempt: number): number | undefined {
    const retryable =
      failure.status === 0 ||
      failure.status === 503 ||
      failure.code === 'IDEMPOTENCY_KEY_IN_PROGRESS' ||
      failure.code === 'RATE_LIMITED';
    if (!retryable) return undefined;
    const { retryDelayMs, maxRetryDelayMs } = this.#options;
    if (failure.retryAfter !== null) {
      const asked = failure.retryAfter * 1000;
      return asked <= maxRetryDelayMs ? asked : undefined;
    }
    return Math.random() * Math.min(maxRetryDelayMs, retryDelayMs * 2 ** attempt);
  }

  #url(path: string, { params = {}, query = {} }: Input): string {
    const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = params[name];
      if (value === undefined) throw new TypeError(`${path} needs ${name}`);
      return encodeURIComponent(value);
    });
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query))
      if (value !== undefined) search.set(name, String(value));
    const text = search.toString();
    return `${this.#options.baseUrl}${filled}${text ? `?${text}` : ''}`;
  }
}

/** Every item of a cursor-paginated list, page after page, fetched as the loop asks for them. */
export async function* paginate<Item>(
  page: (cursor: string | undefined) => Promise<{ data: Item[]; nextCursor: string | null }>,
): AsyncGenerator<Item, void, undefined> {
  let cursor: string | undefined;
  do {
    const { data, nextCursor } = await page(cursor);
    yield* data;
    cursor = nextCursor ?? undefined;
  } while (cursor);
}
