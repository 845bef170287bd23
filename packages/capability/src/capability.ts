// A product's side of the capability plane (docs/capabilities.md of platform-core): its manifest, verifying
// the keys its callers present (cached at most 5 s, as the platform's own revocations are), usage recorded
// exactly once, reservations against a project's daily limit, and events published for a project.
import { BreakerReporter, type BreakerReporterOptions } from './breakers.ts';
import { PlatformError } from './errors.ts';
import type { components } from './openapi.ts';
import { type RecorderOptions, UsageRecorder } from './recorder.ts';
import { Transport, type TransportOptions } from './transport.ts';

type Schemas = components['schemas'];
export type Manifest = Schemas['Manifest'];
export type CapabilityRecord = Schemas['Capability'];
export type Verified = Schemas['KeyVerified'];
export type Reservation = Schemas['Reservation'];
export type LimitToday = Schemas['LimitToday'];

export interface CapabilityOptions extends TransportOptions {
  /** how long a verification is believed (default and at most 5,000 ms; 0 asks every time) */
  verifyCacheMs?: number;
}

const VERIFY_CACHE_MAX = 10_000;

export class Capability {
  readonly #transport: Transport;
  readonly #verifyCacheMs: number;
  readonly #verified = new Map<string, { at: number; answer: Promise<Verified> }>();

  constructor(options: CapabilityOptions) {
    this.#transport = new Transport(options);
    this.#verifyCacheMs = Math.min(5000, Math.max(0, options.verifyCacheMs ?? 5000));
  }

  readonly manifest = {
    /** This capability as the platform knows it, with its manifest as last declared. */
    get: (): Promise<CapabilityRecord> =>
      this.#transport.call({ method: 'GET', path: '/capability/v1/manifest' }),
    /** Declares the whole manifest (every process of the platform applies it within 5 s). */
    put: (manifest: Manifest): Promise<CapabilityRecord> =>
      this.#transport.call({ method: 'PUT', path: '/capability/v1/manifest', body: manifest }),
  };

  /**
   * Whether a key a caller presented is a project's, and holds `scopes`. Answers are kept 5 s (a revocation
   * is seen within them, as the platform's own); concurrent checks of one key share one call.
   */
  verify(key: string, scopes: string[] = []): Promise<Verified> {
    const cacheKey = `${key} ${[...scopes].sort().join(',')}`;
    const now = Date.now();
    const known = this.#verified.get(cacheKey);
    if (known && now - known.at < this.#verifyCacheMs) return known.answer;
    const answer = this.#transport.call<Verified>({
      method: 'POST',
      path: '/capability/v1/keys/verify',
      body: { key, scopes },
      idempotencyKey: false,
    });
    if (this.#verifyCacheMs > 0) {
      if (this.#verified.size >= VERIFY_CACHE_MAX)
        this.#verified.delete(this.#verified.keys().next().value as string);
      this.#verified.set(cacheKey, { at: now, answer });
      answer.catch(() => this.#verified.delete(cacheKey)); // a failed call is not an answer to keep
    }
    return answer;
  }

  /** The installation's projects, oldest first, a page at a time (an operator's grant: projects:read). */
  projects(page: { cursor?: string; limit?: number } = {}): Promise<Schemas['CapabilityProjectPage']> {
    return this.#transport.call({ method: 'GET', path: `/capability/v1/projects${query(page)}` });
  }

  /** A project's usage by day, capability and metric, with its limits (an operator's grant: usage:read). */
  usage(projectId: string, range: { from?: string; to?: string } = {}): Promise<Schemas['Usage']> {
    return this.#transport.call({
      method: 'GET',
      path: `/capability/v1/usage${query({ projectId, ...range })}`,
    });
  }

  /**
   * Every change of a day's total after `cursor`, with the total as it stands (usage:read): keep the
   * answer's nextCursor and ask again with it, forever; an empty page answers a cursor to poll with.
   */
  usageChanges(page: { cursor?: string; limit?: number } = {}): Promise<Schemas['UsageChangePage']> {
    return this.#transport.call({ method: 'GET', path: `/capability/v1/usage/changes${query(page)}` });
  }

  /** A recorder of usage: batches by size and time, retries with stable ids, close() sends the rest. */
  recorder(options?: RecorderOptions): UsageRecorder {
    return new UsageRecorder(this.#transport, options);
  }

  /** A project's metric today: its daily limit, what was used, what reservations hold, what remains. */
  limit(projectId: string, metric: string): Promise<LimitToday> {
    return this.#transport.call({
      method: 'GET',
      path: `/capability/v1/limits/${encodeURIComponent(projectId)}/${encodeURIComponent(metric)}`,
    });
  }

  /** Reserves part of today's allowance; past the limit a PlatformError USAGE_LIMIT_EXCEEDED (429). */
  reserve(input: {
    projectId: string;
    metric: string;
    amount: number;
    ttlSeconds?: number;
  }): Promise<Reservation> {
    return this.#transport.call({ method: 'POST', path: '/capability/v1/reservations', body: input });
  }

  /** Commits what was used (recorded under the reservation's id); the rest goes back to the day. */
  commit(id: string, amount: number): Promise<Schemas['ReservationCommitted']> {
    return this.#transport.call({
      method: 'POST',
      path: `/capability/v1/reservations/${encodeURIComponent(id)}/commit`,
      body: { amount },
      idempotencyKey: `commit-${id}`,
    });
  }

  release(id: string): Promise<Schemas['ReservationReleased']> {
    return this.#transport.call({
      method: 'POST',
      path: `/capability/v1/reservations/${encodeURIComponent(id)}/release`,
      idempotencyKey: `release-${id}`,
    });
  }

  /**
   * Runs costly work under a reservation, the way LLM gateways budget: the worst case reserved first, what
   * `work` says it used committed, everything released if it throws (then it rethrows).
   */
  async withReservation<T>(
    input: { projectId: string; metric: string; amount: number; ttlSeconds?: number },
    work: (reservation: Reservation) => Promise<{ used: number; result: T }>,
  ): Promise<T> {
    const reservation = await this.reserve(input);
    let outcome: { used: number; result: T };
    try {
      outcome = await work(reservation);
    } catch (error) {
      await this.release(reservation.id).catch(() => {}); // it expires anyway: never hide the work's error
      throw error;
    }
    await this.commit(reservation.id, Math.min(outcome.used, reservation.amount));
    return outcome.result;
  }

  /** Reports this instance's circuit breakers every 10 s and on each change (call start() on the reporter). */
  breakerReporter(options: BreakerReporterOptions): BreakerReporter {
    return new BreakerReporter(this.#transport, options);
  }

  /** A pulling capability's pending erasure tasks, with their subjects, oldest first (at most 100). */
  erasureTasks(): Promise<Schemas['ErasureTaskList']> {
    return this.#transport.call({ method: 'GET', path: '/capability/v1/erasure-tasks' });
  }

  /** Answers an erasure task: how many records were erased or anonymized. */
  completeErasure(erasureId: string, erased: number): Promise<Schemas['ErasureTaskState']> {
    return this.#transport.call({
      method: 'POST',
      path: `/capability/v1/erasure-tasks/${encodeURIComponent(erasureId)}/complete`,
      body: { erased },
      idempotencyKey: `erasure-${erasureId}`,
    });
  }

  /** Publishes one of the capability's declared event types on a project's behalf. */
  publish(event: {
    projectId: string;
    type: string;
    data: object;
    subjects?: { type: 'email' | 'phone' | 'external_id'; value: string }[];
    orderingKey?: string;
    idempotencyKey?: string;
  }): Promise<Schemas['EventPublished']> {
    const { idempotencyKey, ...body } = event;
    return this.#transport.call({ method: 'POST', path: '/capability/v1/events', body, idempotencyKey });
  }
}

export { PlatformError };

/** A query string of the members given (none: ''). */
function query(members: Record<string, string | number | undefined>): string {
  const given = Object.entries(members).filter(
    (entry): entry is [string, string | number] => entry[1] !== undefined,
  );
  return given.length === 0
    ? ''
    : `?${new URLSearchParams(given.map(([k, v]): [string, string] => [k, String(v)]))}`;
}
