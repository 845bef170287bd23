// What every part of a process shares (the database, the domain services' dependencies, the registry),
// made once by createService (service.ts); nothing else is global.
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { readOnly } from './audit/work.ts';
import { DeclaredTypes } from './catalogue/declared.ts';
import { TenantSchemas } from './catalogue/validation.ts';
import { CORE_CAPABILITY } from './core-capability.ts';
import type { Database } from './db/database.ts';
import { type WakeWorkers, workerWaker } from './delivery-store/wake.ts';
import { type ErasureAsking, erasureAsking } from './erasure/asking.ts';
import { type SubjectHasher, subjectHasher } from './erasure/subject.ts';
import { DeliveryForecast } from './events/forecast.ts';
import { healthService } from './health/service.ts';
import { KeyActivity } from './keys/activity.ts';
import { type KeyCache, keyCache } from './keys/cache.ts';
import { keyService } from './keys/service.ts';
import { type Clock, systemClock } from './lib/clock.ts';
import type { Config } from './lib/config.ts';
import type { Keyring } from './lib/crypto.ts';
import { Metrics } from './metrics/metrics.ts';
import { CapabilityDirectory } from './plane/capabilities/directory.ts';
import { CapabilitySigning } from './plane/capabilities/signing.ts';
import { capabilityStore } from './plane/capabilities/store.ts';
import { partitionsReady } from './plane/metering/partitions.ts';
import type { MeteringDeps } from './plane/metering/service.ts';
import { KnownProjects } from './projects/known.ts';
import { CapabilityRegistry, defaultLimits } from './registry.ts';
import { SettingsLease } from './settings/lease.ts';
import { type UsageLimits, usageLimits } from './usage/limits.ts';
import { Meter } from './usage/meter.ts';
import { tokenBuckets } from './usage/rate-limits.ts';
import { type RequestLimits, requestLimits } from './usage/request-limits.ts';
import { type SharedTokenBuckets, sharedTokenBuckets } from './usage/shared-rate-limits.ts';
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
  /** this process's Prometheus metrics (served when PLATFORM_METRICS_PORT is set) */
  metrics: Metrics;
  limits: UsageLimits;
  requestLimits: RequestLimits;
  /** the request rate limits every API process shares, when REDIS_URL is set */
  sharedLimits: SharedTokenBuckets | undefined;
  /** In-process signals: 'deliveries' when a commit queued some (wakes a worker sharing the process). */
  signals: EventEmitter<{ deliveries: [] }>;
  /** after a commit that queued deliveries: wakes the workers, in this process and others (delivery-store/wake.ts) */
  wakeWorkers: WakeWorkers;
  db: Database;
  log: Logger;
  registry: CapabilityRegistry;
  health: ReturnType<typeof healthService>;
  keys: KeyCache;
  /** when each key was last used, written in batches */
  keyActivity: KeyActivity;
  /** the event types each project declares, as last read: what creates of endpoints predict */
  declaredTypes: DeclaredTypes;
  /** where tenants' schemas are compiled and run, off the event loop */
  schemas: TenantSchemas;
  /** how many deliveries the last publish of each kind queued: what a publish predicts */
  deliveryForecast: DeliveryForecast;
  /** the capabilities declared by manifests, read into the registry every 5 s */
  directory: CapabilityDirectory;
  /** what metering's services share in a process (plane/metering/service.ts) */
  metering: MeteringDeps;
  /** capabilities' signing keys, for what Core sends them (erasure requests, the gateway's requests) */
  signing: CapabilitySigning;
  /** asking capabilities of their own to erase a subject (erasure/asking.ts) */
  erasureAsking: ErasureAsking;
  /** the lease under which this process believes the settings it keeps (settings/lease.ts) */
  settings: SettingsLease;
}

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
  const signals = new EventEmitter<{ deliveries: [] }>();
  const metrics = new Metrics({
    enabled: config.metrics !== undefined,
    version: config.version,
    commit: config.commit,
  });
  const meter = new Meter({ db, clock, log, metrics });
  let settings: SettingsLease | undefined;
  const bound = () => settings?.held() === true;
  const limits = usageLimits({ db, clock, meter, bound, defaults: () => defaultLimits(registry, config) });
  const local = tokenBuckets(config.rateLimit);
  const sharedLimits = config.redisUrl
    ? sharedTokenBuckets({
        url: config.redisUrl,
        ...config.rateLimit,
        local,
        log,
        onFallback: () => metrics.sharedLimitFallbacks.inc(),
      })
    : undefined;
  const signing = new CapabilitySigning(db, keyring, bound);
  const directory = new CapabilityDirectory({ db, registry, log });
  const keys = keyCache((checked) => keyService(readOnly(db)).checkMany(checked));
  settings = new SettingsLease({
    db,
    log,
    kept: {
      async forget(change) {
        if (change.kind === 'limits') return limits.forget(change.projectId);
        signing.forget(change.name);
        keys.forgetCapability(change.name);
        await directory.reload();
      },
      async forgetAll(lastChangeMs) {
        signing.forgetAll();
        keys.forgetCapability();
        await directory.reload();
        await limits.forgetAll(lastChangeMs);
      },
    },
  });
  return {
    settings,
    signing,
    erasureAsking: erasureAsking({ db, keyring, registry, signing, log, erasure: config.erasure }),
    meter,
    metrics,
    limits,
    requestLimits: requestLimits({ rateLimits: sharedLimits ?? local, limits, meter, config }),
    sharedLimits,
    config,
    clock,
    keyring,
    hashSubject: subjectHasher(db, keyring),
    resolve: options.resolve ?? systemResolver,
    signals,
    wakeWorkers: workerWaker(db, signals),
    db,
    log,
    registry,
    health: healthService({ config, db, registry }),
    keys,
    keyActivity: new KeyActivity({ db, log }),
    declaredTypes: new DeclaredTypes(db),
    schemas: new TenantSchemas(),
    deliveryForecast: new DeliveryForecast(),
    directory,
    metering: {
      pool: db,
      projects: new KnownProjects(db),
      partitionsReady: partitionsReady(db),
      clock,
      registry,
      limits,
      declaredMetrics: async (capability) =>
        (await capabilityStore(db).declaredMetrics(capability)).map((m) => m.slice(capability.length + 1)),
    },
  };
}
