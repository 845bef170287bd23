// start-up and footprint: `platform start` to ready on an existing data directory (or database), and
// the Node process's resident memory idle and under the api load. Targets: ready within 3 s, idle RSS
// under 150 MB. PostgreSQL's own processes are not counted (they are not the service's).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type BenchResult,
  type Measure,
  median,
  platformEnv,
  runLoad,
  spread,
  startPlatform,
} from './lib.ts';

const ROUNDS = 5;

const rssMb = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
};

export async function startup(databaseUrl: string, embedded: boolean): Promise<BenchResult> {
  // Embedded: a data directory of its own, prepared by a first start. Server: the run's database.
  const dataDir = mkdtempSync(path.join(tmpdir(), 'pcs-'));
  const env = embedded
    ? { ...platformEnv(''), DATABASE_URL: '', PLATFORM_DATA_DIR: dataDir }
    : platformEnv(databaseUrl, { PLATFORM_DATA_DIR: dataDir });
  try {
    const first = await startPlatform('start', { ...env, PLATFORM_LOG_LEVEL: 'info' });
    const key = /pk_test_[0-9A-Za-z]{32}/.exec(first.output())?.[0];
    await first.stop();
    const ready: number[] = [];
    let idle = 0;
    let loaded = 0;
    let load: Measure | undefined;
    for (let i = 0; i < ROUNDS; i++) {
      const started = performance.now();
      const service = await startPlatform('start', env);
      ready.push((performance.now() - started) / 1000);
      const pid = service.child.pid as number;
      if (i === ROUNDS - 1) {
        await new Promise((resolve) => setTimeout(resolve, 3000));
        idle = rssMb(pid);
        if (key) {
          const sampler = setInterval(() => {
            loaded = Math.max(loaded, rssMb(pid));
          }, 200);
          load = await runLoad<Measure>('http.ts', {
            url: `${service.baseUrl}/core/v1/projects/me`,
            connections: 32,
            duration: 5,
            headers: { 'x-api-key': key },
          });
          clearInterval(sampler);
        }
      }
      await service.stop();
    }
    const readiness = spread(ready);
    return {
      name: 'startup-footprint',
      figures: [
        {
          name: `platform start to ready (${embedded ? 'embedded, existing data directory' : 'PostgreSQL server'}), seconds`,
          subject: { median: round(readiness.median), min: round(readiness.min), max: round(readiness.max) },
          target: '≤ 3 s',
          met: median(ready) <= 3,
        },
        {
          name: 'resident memory of the Node process idle, MB',
          subject: { rss: Math.round(idle) },
          target: '< 150 MB',
          met: idle < 150,
        },
        {
          name: 'resident memory under the api load (c=32), MB',
          subject: { rss: Math.round(loaded), rate: Math.round(load?.rate ?? 0) },
        },
      ],
      checks: [{ name: 'the first start printed a key', ok: Boolean(key) }],
      errors: { failed: load?.errors ?? 0, total: load?.total ?? 0 },
    };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const round = (n: number) => Math.round(n * 100) / 100;
