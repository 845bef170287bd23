// Wires the database, the services and the registry into one context; nothing else is global.

import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { CapabilityRegistry } from './capabilities.ts';
import { type Clock, systemClock } from './clock.ts';
import type { Config } from './config.ts';
import type { Keyring } from './crypto.ts';
import type { Database } from './db/database.ts';
import { coreEraser } from './erasure/service.ts';
import { type SubjectHasher, subjectHasher } from './erasure/subject.ts';
import { TEST_EVENT_TYPE } from './events/store.ts';
import { healthService } from './health/service.ts';
import { type KeyCache, keyCache } from './http/auth.ts';
import { tokenBuckets } from './http/rate-limit.ts';
import { keyService } from './keys/service.ts';
import { type UsageLimits, usageLimits } from './usage/limits.ts';
import { Meter } from './usage/meter.ts';
import { type Resolver, systemResolver } from './webhooks/address-policy.ts';

export interface Context {
  config: Config;
  clock: Clock;
  keyring: Keyring;
  hashSubject: SubjectHasher;
  /** How webhook host names are resolved for the address policy. */
  resolve: Resolver;
  meter: Meter;
  limits: UsageLimits;
  rateLimits: ReturnType<typeof tokenBuckets>;
  /** In-process signals: 'deliveries' when a commit queued some (wakes a worker sharing the process). */
  signals: EventEmitter<{ deliveries: [] }>;
  db: Database;
  log: Logger;
  registry: CapabilityRegistry;
  health: ReturnType<typeof healthService>;
  keys: KeyCache;
}

export function createContext(options: {
  config: Config;
  db: Database;
  log: Logger;
  keyring: Keyring;
  clock?: Clock;
  resolve?: Resolver;
  registry?: CapabilityRegistry;
}): Context {
  const { config, db, log, keyring } = options;
  const registry = options.registry ?? new CapabilityRegistry();
  registry.register({
    name: 'core',
    eventTypes: [TEST_EVENT_TYPE],
    metrics: ['api_requests', 'events_published', 'webhook_deliveries', 'subjects_erased'],
    eraser: coreEraser,
  });
  const clock = options.clock ?? systemClock;
  const meter = new Meter({ db, clock, log });
  return {
    meter,
    limits: usageLimits({ db, clock, meter, defaults: config.dailyLimits }),
    rateLimits: tokenBuckets(config.rateLimit),
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
  };
}
