// metrics: the API's throughput with metrics on (PLATFORM_METRICS_PORT set: the per-request histogram,
// Node's metrics, and a scrape every second, harsher than Prometheus's usual 15 s) against the same API
// with metrics off, in alternated rounds on one database: GET /core/v1/projects/me, where the per-request
// cost shows most, and POST /core/v1/events, a write with its idempotency outcome counted. The CPU time
// the serving process spends per request is reported too: on this shared 2-core machine throughput
// rounds swing by ±20 %.
import { readFileSync } from 'node:fs';
import {
  type BenchResult,
  errorsOf,
  type Figure,
  type Measure,
  platformEnv,
  ratioFigure,
  runLoad,
  spread,
  startPlatform,
} from './lib.ts';
import { migrated, seedTenants } from './seed.ts';

const CONNECTIONS = 32;
const DURATION = 5;
const ROUNDS = 8;
const SCRAPE_EVERY_MS = Number(process.env.BENCH_SCRAPE_MS ?? 1000);
/** Linux's clock ticks per second, in which /proc/<pid>/stat counts CPU time */
const TICKS = 100;

type CpuMeasure = Measure & { cpuPerRequestUs: number };

/** A process's CPU time so far (user and system), in µs, from /proc (Linux). */
function cpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS;
}

/** A load, with the CPU time the serving process spent per request during it. */
async function withCpu(pid: number, load: () => Promise<Measure>): Promise<CpuMeasure> {
  const before = cpuUs(pid);
  const measure = await load();
  return { ...measure, cpuPerRequestUs: (cpuUs(pid) - before) / Math.max(measure.total, 1) };
}

/** CPU per request, off over on: 1 when metrics cost nothing, steadier than throughput on a busy machine. */
function cpuFigure(name: string, rounds: { baseline: CpuMeasure; subject: CpuMeasure }[]): Figure {
  const per = (which: 'baseline' | 'subject') =>
    Math.round(spread(rounds.map((r) => r[which].cpuPerRequestUs)).median * 10) / 10;
  return {
    name,
    ratio: spread(rounds.map((r) => r.baseline.cpuPerRequestUs / r.subject.cpuPerRequestUs)),
    subject: { cpuPerRequestUs: per('subject') },
    baseline: { cpuPerRequestUs: per('baseline') },
    notes: 'the serving process’s CPU time per request (/proc), metrics off over on',
  };
}

type Service = Awaited<ReturnType<typeof startPlatform>>;
type Rounds = { baseline: CpuMeasure; subject: CpuMeasure }[];

export async function metrics(databaseUrl: string): Promise<BenchResult> {
  await migrated(databaseUrl);
  const [tenant] = await seedTenants(databaseUrl, 1, 'metrics');
  if (!tenant) throw new Error('no tenant');
  const headers = { 'x-api-key': tenant.key };
  let loads = 0;
  const load = (service: Service, what: 'read' | 'publish', duration = DURATION) =>
    withCpu(service.child.pid as number, () =>
      runLoad<Measure>(
        'http.ts',
        what === 'read'
          ? { url: `${service.baseUrl}/core/v1/projects/me`, connections: CONNECTIONS, duration, headers }
          : {
              url: `${service.baseUrl}/core/v1/events`,
              method: 'POST',
              connections: CONNECTIONS,
              duration,
              headers: { ...headers, 'content-type': 'application/json' },
              body: JSON.stringify({ type: 'bench.metrics', data: { n: 1 } }),
              idempotency: 'fresh',
              prefix: `metrics-${++loads}`, // a key of its own to every request of every round
            },
      ),
    );
  const scrapes = { answered: 0, failed: 0 };
  const reads: Rounds = [];
  const writes: Rounds = [];
  // Two processes side by side are not alike: in a run with metrics off in both, the one started second
  // served 8 % more. So every round starts a new pair, the first started alternating, warms both, and
  // loads them in alternating order.
  for (let round = 0; round < ROUNDS; round++) {
    const start = (on: boolean) =>
      startPlatform('serve', platformEnv(databaseUrl, on ? { PLATFORM_METRICS_PORT: '0' } : {}));
    const first = await start(round % 2 === 0);
    const second = await start(round % 2 !== 0);
    const [on, off] = round % 2 === 0 ? [first, second] : [second, first];
    const scraper = scrapeEvery(await on.waitFor(/platform-core metrics on (http:\/\/\S+)/), scrapes);
    try {
      for (const service of [off, on])
        for (const what of ['read', 'publish'] as const) await load(service, what, 1);
      const pair = async (what: 'read' | 'publish') => {
        if (round % 2 === 0) {
          const baseline = await load(off, what);
          return { baseline, subject: await load(on, what) };
        }
        const subject = await load(on, what);
        return { baseline: await load(off, what), subject };
      };
      reads.push(await pair('read'));
      writes.push(await pair('publish'));
    } finally {
      clearInterval(scraper);
      await on.stop();
      await off.stop();
    }
  }
  return {
    name: 'metrics',
    figures: [
      ratioFigure(`GET /core/v1/projects/me, metrics on vs off (c=${CONNECTIONS})`, reads, 0.95),
      ratioFigure(`POST /core/v1/events, metrics on vs off (c=${CONNECTIONS})`, writes, 0.95),
      cpuFigure('GET /core/v1/projects/me: CPU per request, off / on', reads),
      cpuFigure('POST /core/v1/events: CPU per request, off / on', writes),
    ],
    checks: [
      {
        name: 'every scrape during the load answered 200',
        ok: scrapes.answered > 0 && scrapes.failed === 0,
        detail: `${scrapes.answered} scrapes, ${scrapes.failed} failed`,
      },
    ],
    errors: [errorsOf(reads), errorsOf(writes)].reduce((sum, e) => ({
      failed: sum.failed + e.failed,
      total: sum.total + e.total,
    })),
  };
}

/** Scrapes the metrics listener every SCRAPE_EVERY_MS, counting the answers; clear the interval to stop. */
function scrapeEvery(url: string, counts: { answered: number; failed: number }) {
  return setInterval(() => {
    fetch(url)
      .then(async (response) => {
        await response.text();
        if (response.status === 200) counts.answered++;
        else counts.failed++;
      })
      .catch(() => counts.failed++);
  }, SCRAPE_EVERY_MS);
}
