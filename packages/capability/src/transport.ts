// One call of a capability to the platform: its key, an idempotency key on each write (the same on every
// retry, so a retry never makes a second effect), a time limit per attempt, and retries with full jitter
// when no answer came or the service said to come back.
import { PlatformError } from './errors.ts';

export interface TransportOptions {
  /** the capability's key (pk_cap_…) */
  apiKey: string;
  /** where the platform is: https://platform.internal.example.com */
  baseUrl: string;
  /** each attempt's time limit (default 10 000 ms) */
  timeoutMs?: number;
  /** retries after the first attempt (default 3) */
  maxRetries?: number;
  /** another fetch (a proxy's, a test's) */
  fetch?: typeof fetch;
}

export interface Request {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  body?: unknown;
  /** writes only: defaults to a new one, kept for every retry of this call */
  idempotencyKey?: string | false;
  signal?: AbortSignal;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Transport {
  readonly #options: Required<Omit<TransportOptions, 'fetch'>> & { fetch: typeof fetch };

  constructor(options: TransportOptions) {
    if (!/^pk_cap_/.test(options.apiKey ?? ''))
      throw new TypeError('apiKey must be a capability’s key (pk_cap_…)');
    if (!/^https?:\/\//.test(options.baseUrl ?? '')) throw new TypeError('baseUrl must be an http(s) URL');
    this.#options = {
      timeoutMs: 10_000,
      maxRetries: 3,
      ...options,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    };
  }

  async call<T>(request: Request): Promise<T> {
    const headers: Record<string, string> = { 'x-api-key': this.#options.apiKey, accept: 'application/json' };
    if (request.method !== 'GET' && request.idempotencyKey !== false)
      headers['idempotency-key'] = request.idempotencyKey ?? crypto.randomUUID();
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const init = {
      method: request.method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
    };
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.#attempt(request.path, init, request.signal);
      if (!(outcome instanceof PlatformError)) return outcome as T;
      if (!outcome.retryable || attempt >= this.#options.maxRetries) throw outcome;
      await sleep(
        outcome.retryAfter !== null ? outcome.retryAfter * 1000 : Math.random() * 200 * 2 ** attempt,
      );
    }
  }

  async #attempt(path: string, init: RequestInit, caller?: AbortSignal): Promise<unknown> {
    const timeout = AbortSignal.timeout(this.#options.timeoutMs);
    const signal = caller ? AbortSignal.any([caller, timeout]) : timeout;
    try {
      const response = await this.#options.fetch(`${this.#options.baseUrl}${path}`, { ...init, signal });
      if (!response.ok) return await PlatformError.of(response);
      return response.status === 204 ? undefined : await response.json();
    } catch (error) {
      if (caller?.aborted) throw caller.reason;
      const timedOut = timeout.aborted;
      const detail = timedOut ? 'no answer within the time limit' : `no answer: ${String(error)}`;
      return new PlatformError(
        { status: 0, code: timedOut ? 'TIMEOUT' : 'CONNECTION_FAILED', detail },
        { cause: error },
      );
    }
  }
}
