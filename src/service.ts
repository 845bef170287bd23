// The one composition root: createService wires the database, the domain services and the registry into
// one context, and runs the parts a process asks for: the HTTP API, the delivery worker (with the
// background jobs and housekeeping that go with it), or both. main.ts, the tests and the benchmarks all start it this way.
import { type Context, type ContextOptions, createContext } from './context.ts';
import { DeliveryWorker } from './delivery/worker.ts';
import { type App, buildApp } from './http/app.ts';
import { registerScraped } from './metrics/scraped.ts';
import { type MetricsListener, serveMetrics } from './metrics/server.ts';
import { startMaintenance } from './process/maintenance.ts';
import { startJobs } from './recovery/jobs.ts';
import { servicesOf } from './services.ts';

export interface ServiceOptions extends ContextOptions {
  /** run the HTTP API */
  api: boolean;
  /** run the delivery worker and the housekeeping */
  worker: boolean;
}

export interface Service {
  context: Context;
  app: App | undefined;
  worker: DeliveryWorker | undefined;
  /** the metrics listener's address once started, when PLATFORM_METRICS_PORT is set */
  readonly metricsAddress: string | undefined;
  /** Starts the parts: the usage meter, the worker and housekeeping, then the API's listener (its address). */
  start(listen?: { port: number; host: string }): Promise<string | undefined>;
  /** Stops in order: no new requests and in-flight ones finished, the worker, the last usage counts. */
  stop(): Promise<void>;
}

export async function createService(options: ServiceOptions): Promise<Service> {
  const context = createContext(options);
  const app = options.api ? await buildApp(context, (work) => servicesOf(context, work)) : undefined;
  const worker = options.worker ? new DeliveryWorker(context) : undefined;
  let stopMaintenance: (() => void) | undefined;
  let stopJobs: (() => Promise<void>) | undefined;
  let metricsListener: MetricsListener | undefined;
  const { metrics, config } = context;
  if (metrics.enabled) {
    registerScraped(metrics, {
      db: context.db,
      usageFlushLag: () => context.meter.flushLagSeconds(),
      worker: worker && { inUse: () => worker.inUse, limit: config.workerConcurrency },
      sharedLimits: app && context.sharedLimits?.shared,
    });
  }
  return {
    context,
    app,
    worker,
    get metricsAddress() {
      return metricsListener?.address;
    },
    async start(listen) {
      await context.settings.start(); // before anything it keeps is read
      context.meter.start();
      context.limits.start();
      await context.directory.start();
      if (app) {
        context.keyActivity.start();
        context.keys.start(); // the keys in use, refreshed ahead
        context.sharedLimits?.start();
      }
      if (config.metrics) {
        metricsListener = await serveMetrics(metrics, config.metrics, context.log);
        context.log.info({ address: metricsListener.address }, 'metrics listening');
      }
      if (worker) {
        await worker.start();
        stopMaintenance = startMaintenance(context);
        stopJobs = startJobs({ ...context, pollMs: context.config.workerPollMs });
      }
      return app && listen ? app.listen(listen) : undefined;
    },
    async stop() {
      await app?.drain.drain(context.config.shutdown); // see http/drain.ts
      stopMaintenance?.();
      await stopJobs?.();
      await worker?.stop();
      await context.keyActivity.stop(); // when keys were last used
      context.keys.stop();
      await context.limits.stop(); // unused allowance goes back to the day
      await context.meter.stop(); // the last second of usage counts
      await context.sharedLimits?.stop();
      context.directory.stop();
      await context.schemas.close();
      await context.settings.stop();
      await metricsListener?.close(); // last: a scrape during the stop still answers
    },
  };
}
