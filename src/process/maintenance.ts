// Housekeeping that runs in the worker processes (`start`, `worker`), every 10 minutes and 5 s after the
// start: each task is idempotent and safe with several workers running it at once.
//  - idempotency records are forgotten after 24 hours (expired ones are already ignored by the claim:
//    purging only reclaims the space);
//  - usage meters silent for 7 days are forgotten: a meter's row is what makes its retried flush count
//    once, and a process retries within seconds, so a week is far beyond any retry;
//  - the daily-limit reservations of days before yesterday are forgotten (they bind nothing);
//  - the history keeps a week of partitions ahead, and whole days go at its horizon (delivery-store/retention.ts);
//  - background jobs are forgotten once they ended longer ago than the history's retention;
//  - the metering tables keep their partitions made ahead, and drop those past their window; capabilities'
//    breaker reports are forgotten a day on (instances come and go);
//  - every 5 s, the history partitions that have doubled since they were last analyzed are analyzed again
//    (delivery-store/statistics.ts: a plan made while a day was small must not outlive it), and capabilities'
//    reservations past their time give their allowance back, and capabilities are asked again to erase
//    (erasure/asking.ts).
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import { feedStore } from '../delivery-store/feed.ts';
import { historyRetention } from '../delivery-store/retention.ts';
import { analyzeGrown } from '../delivery-store/statistics.ts';
import type { ErasureAsking } from '../erasure/asking.ts';
import { idempotencyStore } from '../idempotency/store.ts';
import { type Clock, DAY_MS, utcDay } from '../lib/clock.ts';
import type { Config } from '../lib/config.ts';
import { breakerStore } from '../plane/capabilities/breakers.ts';
import { dropOldPartitions, ensurePartitions } from '../plane/metering/partitions.ts';
import { meteringStore } from '../plane/metering/store.ts';
import { forgetJobs } from '../recovery/jobs.ts';
import { usageStore } from '../usage/store.ts';

const EVERY_MS = 10 * 60_000;
const STATISTICS_EVERY_MS = 5_000;
export const METER_RETENTION_MS = 7 * DAY_MS;

interface Deps {
  db: Database;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'retentionDays'>;
}

interface StartDeps extends Deps {
  erasureAsking: ErasureAsking;
}

/** One pass of every task; a failed task is logged and tried again at the next pass. */
export async function runMaintenance({ db, clock, log, config }: Deps): Promise<void> {
  const history = historyRetention(db);
  const horizon = () => history.horizon(clock.now(), config.retentionDays);
  const tasks: [string, () => Promise<number>][] = [
    ['made the history partitions of the days ahead', () => history.ensureAhead(clock.now())],
    [
      'marked dead the deliveries still pending past the horizon',
      async () => history.expirePending(await horizon()),
    ],
    [
      'dropped the history days past the horizon',
      async () => (await history.dropBefore(await horizon())).length,
    ],
    [
      "redacted the payloads past their project's retention",
      () => drain(() => history.redactShortRetention(config.retentionDays)),
    ],
    [
      "forgot the polling feeds' messages past the horizon",
      async () => {
        const before = await horizon();
        return drain(() => feedStore(db).forgetBefore(before));
      },
    ],
    ['forgot the jobs that ended before the horizon', () => forgetJobs(db, config.retentionDays)],
    [
      'forgot idempotency records older than 24 hours',
      () => drain(() => idempotencyStore(db).purge(clock.now())),
    ],
    [
      'forgot usage meters silent for 7 days',
      () => usageStore(db).forgetMeters(new Date(clock.now().getTime() - METER_RETENTION_MS)),
    ],
    [
      'made the metering partitions ahead',
      async () => {
        await ensurePartitions(db, clock.now());
        return 0;
      },
    ],
    [
      'dropped the metering partitions past their window',
      async () => (await dropOldPartitions(db, clock.now())).length,
    ],
    ['forgot breaker reports older than a day', () => breakerStore(db).forgetOld()],
    [
      'forgot the daily-limit reservations of days gone by',
      () => usageStore(db).forgetQuotaBefore(utcDay(clock.now().getTime() - DAY_MS)),
    ],
  ];
  for (const [done, task] of tasks) {
    try {
      const count = await task();
      if (count > 0) log.info({ count }, done);
    } catch (error) {
      log.warn({ err: error, task: done }, 'maintenance task failed; retrying at the next run');
    }
  }
}

/** Runs a batched purge until a batch comes back empty; the total. */
async function drain(batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let n = await batch(); n > 0; n = await batch()) total += n;
  return total;
}

export function startMaintenance(deps: StartDeps): () => void {
  const statistics = async () => {
    try {
      const analyzed = await analyzeGrown(deps.db);
      if (analyzed.length > 0)
        deps.log.info({ partitions: analyzed }, 'analyzed the history partitions that had grown');
    } catch (error) {
      deps.log.warn({ err: error }, 'analyzing the grown history partitions failed; retrying shortly');
    }
  };
  // Reservations past their time give their allowance back (a reserve that meets the limit does so for
  // its own metric first: this is for the rest).
  const reservations = async () => {
    try {
      const expired = await drain(() => meteringStore(deps.db).expireAll());
      if (expired > 0) deps.log.info({ count: expired }, 'expired the reservations past their time');
    } catch (error) {
      deps.log.warn({ err: error }, 'expiring reservations failed; retrying shortly');
    }
  };
  // Capabilities asked again to erase, those past the window failed, erasures ended (erasure/asking.ts).
  const erasures = async () => {
    try {
      const settled = await deps.erasureAsking.round();
      if (settled > 0) deps.log.info({ count: settled }, 'asked the capabilities again to erase');
    } catch (error) {
      deps.log.warn({ err: error }, 'asking capabilities to erase failed; retrying shortly');
    }
  };
  const stops = [
    repeat(() => runMaintenance(deps), 5_000, EVERY_MS),
    repeat(statistics, STATISTICS_EVERY_MS, STATISTICS_EVERY_MS),
    repeat(reservations, STATISTICS_EVERY_MS, STATISTICS_EVERY_MS),
    repeat(erasures, STATISTICS_EVERY_MS, STATISTICS_EVERY_MS),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}

/** Runs task after firstMs, then every everyMs; a slow run is not overlapped by the next. */
function repeat(task: () => Promise<void>, firstMs: number, everyMs: number): () => void {
  let busy = false;
  const run = async () => {
    if (busy) return;
    busy = true;
    await task().finally(() => {
      busy = false;
    });
  };
  const first = setTimeout(run, firstMs);
  const timer = setInterval(run, everyMs);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
