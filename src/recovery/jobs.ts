// Background jobs (a recovery re-sending an endpoint's events), run by the worker processes: one job at a
// time per process, claimed under a lease so that a crashed worker's job is taken up by another, in
// batches that each commit their deliveries with the job's progress (so nothing is sent twice by the job
// and nothing is skipped). A job's events were fixed when it was asked for (recovery.ts).
import type { Logger } from 'pino';
import type { Database, Db } from '../db/database.ts';
import { DELIVERIES_CHANNEL } from '../delivery-store/channel.ts';
import { enqueue } from '../delivery-store/enqueue.ts';
import { settleLanes } from '../delivery-store/lanes.ts';
import { notFound } from '../lib/errors.ts';
import type { Metrics } from '../metrics/metrics.ts';

const BATCH = 1000;
const LEASE_SECONDS = 60;

export interface Job {
  id: string;
  kind: 'recover';
  state: 'queued' | 'running' | 'done' | 'failed';
  total: number;
  done: number;
  createdAt: string;
  finishedAt: string | null;
}

const RECORD = `id, kind, state, total, done,
  to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "createdAt",
  to_char(finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "finishedAt"`;

export async function getJob(db: Db, projectId: string, id: string): Promise<Job> {
  const { rows } = await db.query<Job>(`select ${RECORD} from jobs where project_id = $1 and id = $2`, [
    projectId,
    id,
  ]);
  if (!rows[0]) throw notFound('job');
  return rows[0];
}

interface Claimed {
  project_id: string;
  id: string;
  done: number;
  endpoint_id: string;
}

/** Takes the oldest job that is queued, or running under an expired lease. */
async function claimJob(db: Db): Promise<Claimed | undefined> {
  const { rows } = await db.query<Claimed>(
    `update jobs j set state = 'running', lease_until = now() + make_interval(secs => $1)
       from (select project_id, id from jobs
              where state in ('queued', 'running') and (lease_until is null or lease_until < now())
              order by created_at limit 1 for update skip locked) as next
      where j.project_id = next.project_id and j.id = next.id
     returning j.project_id, j.id, j.done, j.params->>'endpointId' as endpoint_id`,
    [LEASE_SECONDS],
  );
  return rows[0];
}

/**
 * One batch: a replay delivery to the endpoint for each of the next events (oldest first, so an ordered
 * endpoint takes them in their order), the job's progress and lease with it; the job ends with its last.
 */
async function runBatch(db: Database, job: Claimed): Promise<boolean> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ taken: number; lanes: [string, string][] }>(
      `with batch as (
         select event_id, event_created_at from job_events
          where project_id = $1 and job_id = $2 and n > $3 order by n limit $4
       ), ${enqueue({
         project: '$1',
         event: 'e.id',
         createdAt: 'e.created_at',
         kind: 'replay',
         orderingKey: 'e.ordering_key',
         from: `(select e.* from batch b
                     join events e on e.project_id = $1 and e.id = b.event_id and e.created_at = b.event_created_at
                    order by e.created_at, e.id) e
                  join webhook_endpoints w on w.project_id = $1 and w.id = $5 and w.active`,
         where: 'true',
       })}, progress as (
         update jobs set done = done + (select count(*) from batch),
                lease_until = now() + make_interval(secs => $6),
                state = case when (select count(*) from batch) < $4 then 'done' else state end,
                finished_at = case when (select count(*) from batch) < $4 then now() end
          where project_id = $1 and id = $2
       )
       select (select count(*)::int from batch) as taken,
              (select coalesce(jsonb_agg(distinct jsonb_build_array(endpoint_id, lane))
                                 filter (where lane is not null), '[]') from queued) as lanes,
              case when exists (select 1 from queued) then pg_notify('${DELIVERIES_CHANNEL}', '') end`,
      [job.project_id, job.id, job.done, BATCH, job.endpoint_id, LEASE_SECONDS],
    );
    const { taken, lanes } = rows[0] as { taken: number; lanes: [string, string][] };
    await settleLanes(tx, job.project_id, lanes);
    job.done += taken;
    if (taken < BATCH) {
      await tx.query(`delete from job_events where project_id = $1 and job_id = $2`, [
        job.project_id,
        job.id,
      ]);
      return false;
    }
    return true;
  });
}

/** Runs jobs in a worker process: looks for one every pollMs, and runs it to its end. */
export function startJobs(deps: {
  db: Database;
  log: Logger;
  pollMs: number;
  metrics?: Pick<Metrics, 'jobs'>;
}): () => Promise<void> {
  let running: Promise<void> | undefined; // one look at a time: a long job is not overlapped
  let stopped = false;
  const tick = async () => {
    for (let job = await claimJob(deps.db); job && !stopped; job = await claimJob(deps.db)) {
      while (!stopped && (await runBatch(deps.db, job))) {}
      if (stopped) break;
      deps.metrics?.jobs.inc();
      deps.log.info({ job: job.id, done: job.done }, 'job done');
    }
  };
  const timer = setInterval(() => {
    running ??= tick()
      .catch((error) =>
        deps.log.warn({ err: error }, 'running a job failed; its lease lets it be taken up again'),
      )
      .finally(() => {
        running = undefined;
      });
  }, deps.pollMs);
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}

/** Forgets the jobs that ended more than `days` ago (with what is left of their events); how many. */
export async function forgetJobs(db: Db, days: number): Promise<number> {
  const { rowCount } = await db.query(
    `delete from jobs where state in ('done', 'failed') and finished_at < now() - make_interval(days => $1)`,
    [days],
  );
  return rowCount ?? 0;
}
