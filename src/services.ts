// The services of one unit of work (audit/work.ts), built in one place for every caller: a request (a route asks
// request.services), a CLI command, a test, a benchmark. Each is made the first time it is asked for,
// once per unit of work, bound to that work's database handle, hooks and actor; what they share for the
// whole process comes from the context, each service given by name only the parts its deps declare (never
// the context whole). Nothing else builds a service.
import { auditLog } from './audit/store.ts';
import type { Work } from './audit/work.ts';
import { eventCatalogue } from './catalogue/service.ts';
import type { Context } from './context.ts';
import { deliveryLog } from './delivery-store/log.ts';
import { recovery } from './delivery-store/recover.ts';
import { erasureService } from './erasure/service.ts';
import { erasureTasks } from './erasure/tasks.ts';
import { eventService } from './events/service.ts';
import { keyService } from './keys/service.ts';
import { capabilityService } from './plane/capabilities/service.ts';
import { capabilityStore } from './plane/capabilities/store.ts';
import { meteringService } from './plane/metering/service.ts';
import { portalService } from './portal/service.ts';
import { projectService } from './projects/service.ts';
import { getJob } from './recovery/jobs.ts';
import { defaultLimits } from './registry.ts';
import { usageChanges } from './usage/changes.ts';
import { limitOverrides } from './usage/overrides.ts';
import { usageService } from './usage/service.ts';
import { destinationService } from './webhooks/destinations.ts';
import { webhookEndpointService } from './webhooks/service.ts';

export function servicesOf(context: Context, work: Work) {
  const { db } = work;
  const catalogue = () => eventCatalogue(db, context.registry, context.schemas);
  const endpointDeps = {
    keyring: context.keyring,
    addresses: { allowPrivate: context.config.webhookAllowPrivate, resolve: context.resolve },
    registry: context.registry,
    declaredTypes: context.declaredTypes,
  };
  return lazily({
    projects: () => projectService(work),
    keys: () => keyService(work),
    limits: () =>
      limitOverrides(work, {
        registry: context.registry,
        defaults: () => defaultLimits(context.registry, context.config),
        declaredMetrics: () => capabilityStore(db).declaredMetrics(),
      }),
    usage: () =>
      usageService({ db: context.db, clock: context.clock, meter: context.meter, limits: context.limits }),
    usageChanges: () => usageChanges(db),
    catalogue,
    webhookEndpoints: () => webhookEndpointService(work, endpointDeps),
    destinations: () => destinationService(work, endpointDeps),
    events: () =>
      eventService(work, {
        hashSubject: context.hashSubject,
        limits: context.limits,
        meter: context.meter,
        metrics: context.metrics,
        clock: context.clock,
        log: deliveryLog(db, context.config.retentionDays),
        retentionDays: context.config.retentionDays,
        wake: context.wakeWorkers,
        forecast: context.deliveryForecast,
        exampleOf: (projectId, type) => catalogue().exampleOf(projectId, type),
        checkData: (projectId, type, data, fresh) =>
          catalogue().check(projectId, type, data, context.declaredTypes, fresh),
        typesOf: async (capability, wanted) => {
          const known = () => context.registry.get(capability)?.eventTypes ?? [];
          if (!known().some((t) => t.name === wanted)) await context.directory.refresh();
          return known().map((t) => t.name);
        },
      }),
    deliveryLog: () => deliveryLog(db, context.config.retentionDays),
    recovery: () => recovery(db, context.config.retentionDays),
    jobs: () => ({ get: (projectId: string, id: string) => getJob(db, projectId, id) }),
    erasure: () =>
      erasureService(work, {
        registry: context.registry,
        hashSubject: context.hashSubject,
        clock: context.clock,
        meter: context.meter,
        db: context.db,
        keyring: context.keyring,
        erasureAsking: context.erasureAsking,
      }),
    portal: () => portalService(work),
    audit: () => auditLog(db),
    capabilities: () =>
      capabilityService(work, {
        keyring: context.keyring,
        schemas: context.schemas,
        changed: () => void context.directory.refresh(),
        leaving: (name) => erasureTasks(db).skipOf(name),
      }),
    metering: () => meteringService(work, context.metering),
  });
}

export type Services = ReturnType<typeof servicesOf>;

/**
 * An object whose members are made on first reading, each once. A proxy: it is made for every request,
 * and defining a getter per member cost thirty times as much (docs/decisions/measured-choices.md).
 */
function lazily<T extends Record<string, () => unknown>>(
  makers: T,
): { readonly [K in keyof T]: ReturnType<T[K]> } {
  const made: Record<string | symbol, unknown> = Object.create(null);
  return new Proxy(made, {
    get(target, name) {
      if (!(name in target) && typeof name === 'string' && Object.hasOwn(makers, name))
        target[name] = (makers[name] as () => unknown)();
      return target[name];
    },
  }) as { readonly [K in keyof T]: ReturnType<T[K]> };
}
