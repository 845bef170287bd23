// graphile-worker: with its defaults, or batched as its performance page recommends (a local queue of
// 500 fetched at once, completions and failures batched). Its logger is quiet in both: by default it
// prints a line per job, which the service does not.
import { Logger, makeWorkerUtils, run, type WorkerUtils } from 'graphile-worker';
import type { Job, Peer } from './peer.ts';

const quiet = new Logger(() => () => {});

export function graphile(connectionString: string, batched: boolean): Peer {
  let utils: WorkerUtils | undefined;
  const batching = batched
    ? { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 }
    : {};
  return {
    async prepare() {
      utils = await makeWorkerUtils({ connectionString, logger: quiet });
      await utils.migrate();
    },

    async enqueue(client, jobs) {
      await client.query(
        `select graphile_worker.add_jobs(array(
           select row('send', job, null, null, null, null, null, null)::graphile_worker.job_spec
             from json_array_elements($1::json) as job))`,
        [JSON.stringify(jobs)],
      );
    },

    async unfinished() {
      const rows = await utils?.withPgClient((client) =>
        client.query<{ n: number }>('select count(*)::int as n from graphile_worker.jobs'),
      );
      return rows?.rows[0]?.n ?? 0;
    },

    async clear() {
      // A killed worker's jobs stay locked for 4 hours; the next round must not inherit them.
      await utils?.withPgClient((client) => client.query('truncate graphile_worker._private_jobs'));
    },

    async work(send, concurrency) {
      const runner = await run({
        preset: { worker: { connectionString, concurrentJobs: concurrency, logger: quiet, ...batching } },
        noHandleSignals: true,
        taskList: { send: (payload) => send(payload as Job) },
      });
      return { stop: () => runner.stop() };
    },

    async close() {
      await utils?.release();
    },
  };
}
