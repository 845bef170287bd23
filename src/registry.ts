// The registry of capabilities (Core, Notify, Pay, Billing, AI): their name, the event types they emit, the
// usage metrics they count (with their default daily limits), the scopes they declare, the providers
// behind their circuit breakers, and an eraser for the data they hold about people. Health reads the
// breakers from here, erasure the erasers, daily limits the metrics, the event-type catalogue the types.
// Two kinds fill it: those that run in this process and register in code (Core), and those that plug
// in as services of their own, declared by their manifests (directory.ts keeps them, 5 s old at most).

import type { Db } from './db/database.ts';
import type { Config } from './lib/config.ts';

/** The kinds of subject (the people erasure is about) every capability's eraser may be asked about. */
export const SUBJECT_TYPES = ['email', 'phone', 'external_id'] as const;
export type SubjectType = (typeof SUBJECT_TYPES)[number];

/** A subject in its canonical form (see erasure/subject.ts). */
export interface Subject {
  type: SubjectType;
  value: string;
}

export type BreakerState = 'closed' | 'open' | 'half_open';

/** A circuit breaker a capability keeps around one provider; health reports its state. */
export interface Breaker {
  readonly provider: string;
  readonly state: BreakerState;
}

/** What an eraser is asked: the project, the normalized subject and its keyed hash (for tagged data). */
export interface ErasureRequest {
  projectId: string;
  subject: Subject;
  subjectHmac: Buffer;
  now: Date;
}

/** An event type a capability emits: listed in every project's catalogue, its schema checked on publish. */
export interface EventTypeDeclaration {
  name: string;
  description: string;
  /** a JSON Schema (2020-12) of the event's `data` */
  schema?: object;
  example?: object;
}

export interface Capability {
  name: string;
  eventTypes?: readonly EventTypeDeclaration[];
  /** the scopes of project keys its routes take (`notify:send`) */
  scopes?: readonly string[];
  /** the default daily limits of its metrics, where it sets one */
  limits?: readonly { metric: string; dailyLimit: number }[];
  /**
   * For capabilities that hold data about people: erases or anonymizes it inside the erase transaction
   * (anonymizing what the law requires to keep) and returns how many records it touched.
   */
  eraser?: (tx: Db, request: ErasureRequest) => Promise<number>;
  /** the usage metrics it counts (a daily limit can only be set on one of these) */
  metrics?: readonly string[];
  /** breakers kept in this process (a capability of its own process reports its providers instead) */
  breakers?: readonly Breaker[];
  /** the providers a capability of its own declares: their breakers are what its instances report */
  providers?: readonly string[];
  /** how a capability of its own is asked to erase: pushed to its erasure URL, or pulled by it */
  erasure?: { mode: 'push'; url: string; timeoutSeconds: number } | { mode: 'pull' };
  /** what an operator granted it beyond its own routes (`projects:read`, `usage:read`) */
  grants?: readonly string[];
  /** the routes the gateway serves for a capability of its own, and where it forwards them */
  gateway?: { upstream: string; routes: readonly GatewayRoute[] };
}

/** A route of a capability served by the gateway (`/<capability><path>`). */
export interface GatewayRoute {
  method: string;
  path: string;
  scope: string;
  idempotent: boolean;
  metric?: string;
}

export class CapabilityRegistry {
  private readonly capabilities = new Map<string, Capability>();
  /** those declared by their manifests, as last read */
  private declared: Capability[] = [];

  register(capability: Capability): void {
    if (this.capabilities.has(capability.name))
      throw new Error(`capability ${capability.name} is already registered`);
    this.capabilities.set(capability.name, capability);
  }

  /** Replaces the capabilities declared by manifests (directory.ts); one registered in code keeps its name. */
  declare(capabilities: Capability[]): void {
    this.declared = capabilities.filter((c) => !this.capabilities.has(c.name));
  }

  list(): Capability[] {
    return [...this.capabilities.values(), ...this.declared];
  }

  /** One capability by name (registered in code first), without copying the list. */
  get(name: string): Capability | undefined {
    return this.capabilities.get(name) ?? this.declared.find((c) => c.name === name);
  }

  /** The default daily limits capabilities set, as `capability/metric` limits. */
  defaultLimits(): { capability: string; metric: string; dailyLimit: number }[] {
    return this.list().flatMap((c) => (c.limits ?? []).map((l) => ({ capability: c.name, ...l })));
  }

  /** Every metric a capability counts, as `capability/metric`. */
  metrics(): string[] {
    return this.list().flatMap((c) => (c.metrics ?? []).map((metric) => `${c.name}/${metric}`));
  }

  eventTypes(): EventTypeDeclaration[] {
    return this.list().flatMap((c) => c.eventTypes ?? []);
  }

  breakers(): { provider: string; state: BreakerState }[] {
    return this.list().flatMap((c) =>
      (c.breakers ?? []).map((b) => ({ provider: b.provider, state: b.state })),
    );
  }
}

/**
 * The daily limits every project has unless it sets its own: the capabilities' defaults, with the
 * installation's PLATFORM_DAILY_LIMITS over them (an operator's word wins over a capability's).
 */
export const defaultLimits = (registry: CapabilityRegistry, config: Pick<Config, 'dailyLimits'>) => [
  ...registry.defaultLimits(),
  ...config.dailyLimits,
];
