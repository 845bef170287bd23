// What every part of a process shares (the database, the domain services' dependencies, the registry),
// made once by createService (service.ts); nothing else is global.
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { type Capability, CapabilityRegistry } from './capabilities.ts';
import { type Clock, systemClock } from './clock.ts';
import type { Config } from './config.ts';
import type { Keyring } from './crypto.ts';
import type { Database } from './db/database.ts';
import { coreEraser } from './erasure/service.ts';
import { type SubjectHasher, subjectHasher } from './erasure/subject.ts';
import { CORE_EVENT_TYPES } from './events/operational.ts';
import { healthService } from './health/service.ts';
import { KeyActivity } from './keys/activity.ts';
import { type KeyCache, keyCache } from './keys/cache.ts';
import { keyService } from './keys/service.ts';
import { type UsageLimits, usageLimits } from './usage/limits.ts';
import { Meter } from './usage/meter.ts';
import { tokenBuckets } from './usage/rate-limits.ts';
import { type RequestLimits, requestLimits } from './usage/request-limits.ts';
import { type Resolver, systemResolver } from './webhooks/address-policy.ts';

/** What every part of a process shares; nothing else is global. */
export interface Context {
  config: Config;
  clock: Clock;
  keyring: Keyring;
  hashSubject: SubjectHasher;
  /** How webhook host names are resolved for the address policy. */
  resolve: Resolver;
  meter: Meter;
  limits: UsageLimits;
  requestLimits: RequestLimits;
  /** In-process signals: 'deliveries' when a commit queued some (wakes a worker sharing the process). */
  signals: EventEmitter<{ deliveries: [] }>;
  db: Database;
  log: Logger;
  registry: CapabilityRegistry;
  health: ReturnType<typeof healthService>;
  keys: KeyCache;
  /** when each key was last used, written in batches */
  keyActivity: KeyActivity;
}

/** Core registers itself like any capability: the event types it emits, the metrics it counts, its eraser. */
export const CORE_CAPABILITY: Capability = {
  name: 'core',
  eventTypes: CORE_EVENT_TYPES,
  metrics: ['api_requests', 'events_published', 'webhook_deliveries', 'subjects_erased'],
  eraser: coreEraser,
};

export interface ContextOptions {
  config: Config;
  db: Database;
  log: Logger;
  keyring: Keyring;
  clock?: Clock;
  resolve?: Resolver;
  registry?: CapabilityRegistry;
}

export function createContext(options: ContextOptions): Context {
  const { config, db, log, keyring } = options;
  const registry = options.registry ?? new CapabilityRegistry();
  registry.register(CORE_CAPABILITY);
  const clock = options.clock ?? systemClock;
  const meter = new Meter({ db, clock, log });
  const limits = usageLimits({ db, clock, meter, defaults: config.dailyLimits });
  return {
    meter,
    limits,
    requestLimits: requestLimits({ rateLimits: tokenBuckets(config.rateLimit), limits, meter, config }),
    config,
    clock,
    keyring,
    hashSubject: subjectHasher(db, keyring),
    resolve: options.resolve ?? systemResolver,
    signals: new EventEmitter<{ deliveries: [] }>(),
    db,
    log,
    registry,
    health: healthService({ config, db, registry }),
    keys: keyCache((key) => keyService(db).check(key)),
    keyActivity: new KeyActivity({ db, log }),
  };
}
