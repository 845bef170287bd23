// delivery-latency: events published at 100, 500, 1,000, 2,000 and 2,500 a second (open loop); the time from the
// publishing call's answer to the receiver's arrival, on one clock. p50, p99, max, and the knee: the
// highest rate the service sustains (answers at ≥ 95 % of it) with p99 under 100 ms. The service runs as
// one `serve` and one `worker` process, as a deployment would, so API and worker each have an event loop.
// Targets are absolute: p50 ≤ 5 ms, p99 ≤ 25 ms at 500/s, knee ≥ 2,500/s.
import type { BenchResult, Figure } from './lib.ts';
import { platformEnv, runLoad, startPlatform } from './lib.ts';
import { migrated, seedTenants } from './seed.ts';

const RATES = [100, 500, 1000, 2000, 2500];
const SECONDS = 5;

interface Step {
  rate: number;
  achieved: number;
  p50: number;
  p99: number;
  max: number;
  lost: number;
  errors: number;
  /** failed publishes by status, or by the error's code when no answer came */
  failures: Record<string, number>;
  total: number;
}

export async function deliveryLatency(databaseUrl: string): Promise<BenchResult> {
  await migrated(databaseUrl);
  const [tenant] = await seedTenants(databaseUrl, 1, 'lat');
  if (!tenant) throw new Error('no tenant');
  const env = platformEnv(databaseUrl, { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1' });
  const service = await startPlatform('serve', env);
  const worker = await startPlatform('worker', env);
  try {
    // A warm-up pass, then the measured one.
    await runLoad<Step[]>('latency.ts', {
      baseUrl: service.baseUrl,
      key: tenant.key,
      rates: [200],
      seconds: 2,
    });
    const steps = await runLoad<Step[]>('latency.ts', {
      baseUrl: service.baseUrl,
      key: tenant.key,
      rates: RATES,
      seconds: SECONDS,
    });
    // A rate counts only if the service took the events at that rate (a backlog of unanswered publishes
    // would hide in the publisher, outside the measured latency).
    const sustained = (s: Step) => s.achieved >= 0.95 * s.rate;
    const knee = Math.max(
      0,
      ...steps.filter((s) => s.p99 < 100 && s.lost === 0 && sustained(s)).map((s) => s.rate),
    );
    const at500 = steps.find((s) => s.rate === 500);
    const figures: Figure[] = steps.map((s) => ({
      name: `${s.rate} events/s (achieved ${Math.round(s.achieved)}/s)`,
      subject: { p50: round(s.p50), p99: round(s.p99), max: round(s.max), lost: s.lost },
      ...(s.errors > 0 ? { notes: `failed publishes: ${JSON.stringify(s.failures)}` } : {}),
      ...(s.rate === 500
        ? {
            target: 'p50 ≤ 5 ms, p99 ≤ 25 ms',
            met: (at500?.p50 ?? Infinity) <= 5 && (at500?.p99 ?? Infinity) <= 25,
          }
        : {}),
    }));
    figures.push({
      name: 'knee (highest rate with p99 < 100 ms)',
      subject: { rate: knee },
      target: '≥ 2500/s',
      met: knee >= 2500,
    });
    return {
      name: 'delivery-latency',
      figures,
      checks: [
        {
          name: 'every published event arrived',
          ok: steps.every((s) => s.lost === 0),
          detail: steps.map((s) => s.lost).join(','),
        },
      ],
      errors: {
        failed: steps.reduce((sum, s) => sum + s.errors, 0),
        total: steps.reduce((sum, s) => sum + s.total, 0),
      },
    };
  } finally {
    await worker.stop();
    await service.stop();
  }
}

const round = (ms: number) => Math.round(ms * 10) / 10;
