// The registry that capabilities (Core, Notify, Pay, Billing, AI) fill: their name, the event types they
// emit, the usage metrics they count, the providers behind their circuit breakers, and an eraser for the
// data they hold about people. Health reads the breakers from here.

import type { Db } from './db/database.ts';
import type { Subject } from './erasure/subject.ts';

export type BreakerState = 'closed' | 'open' | 'half_open';

/**
 * A circuit breaker around one provider: opens after `threshold` consecutive failures, lets one trial
 * through after `coolDownMs` (half_open), and closes again on a success.
 */
export class CircuitBreaker {
  readonly provider: string;
  private failures = 0;
  private openedAt: number | undefined;
  private readonly threshold: number;
  private readonly coolDownMs: number;
  private readonly now: () => number;

  constructor(
    provider: string,
    options: { threshold?: number; coolDownMs?: number; now?: () => number } = {},
  ) {
    this.provider = provider;
    this.threshold = options.threshold ?? 5;
    this.coolDownMs = options.coolDownMs ?? 30_000;
    this.now = options.now ?? Date.now;
  }

  get state(): BreakerState {
    if (this.openedAt === undefined) return 'closed';
    return this.now() - this.openedAt >= this.coolDownMs ? 'half_open' : 'open';
  }

  recordSuccess() {
    this.failures = 0;
    this.openedAt = undefined;
  }

  recordFailure() {
    this.failures++;
    if (this.failures >= this.threshold || this.state === 'half_open') this.openedAt = this.now();
  }
}

/** What an eraser is asked: the project, the normalized subject and its keyed hash (for tagged data). */
export interface ErasureRequest {
  projectId: string;
  subject: Subject;
  subjectHmac: Buffer;
  now: Date;
}

export interface Capability {
  name: string;
  /**
   * For capabilities that hold data about people: erases or anonymizes it inside the erase transaction
   * (anonymizing what the law requires to keep) and returns how many records it touched.
   */
  eraser?: (tx: Db, request: ErasureRequest) => Promise<number>;
  eventTypes?: readonly string[];
  metrics?: readonly string[];
  breakers?: readonly CircuitBreaker[];
}

export class CapabilityRegistry {
  private readonly capabilities = new Map<string, Capability>();

  register(capability: Capability): void {
    if (this.capabilities.has(capability.name))
      throw new Error(`capability ${capability.name} is already registered`);
    this.capabilities.set(capability.name, capability);
  }

  list(): Capability[] {
    return [...this.capabilities.values()];
  }

  breakers(): { provider: string; state: BreakerState }[] {
    return this.list().flatMap((c) =>
      (c.breakers ?? []).map((b) => ({ provider: b.provider, state: b.state })),
    );
  }
}
