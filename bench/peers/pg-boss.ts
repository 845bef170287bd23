// pg-boss: one queue with LISTEN/NOTIFY on (so a worker wakes when a job is created rather than at its
// 2 s poll), workers fetching batches of 8 and fetching again at once while batches come back full; 4 of
// them make the 32 sends in flight. Jobs are inserted in the caller's transaction through its `db` option.
import type pg from 'pg';
import { PgBoss } from 'pg-boss';
import { type Job, type Peer, QUEUE } from './peer.ts';

const BATCH = 8;

export function pgBoss(connectionString: string): Peer {
  const boss = new PgBoss({ connectionString, useListenNotify: true, schema: 'pgboss' });
  boss.on('error', () => {}); // a killed round's connections; the round's own checks see what matters
  let started = false;
  const start = async () => {
    if (started) return;
    started = true;
    await boss.start();
  };
  return {
    async prepare() {
      await start();
      if (!(await boss.getQueue(QUEUE))) await boss.createQueue(QUEUE, { notify: true });
    },

    async enqueue(client, jobs) {
      const db = {
        executeSql: (text: string, values?: unknown[]) => (client as pg.ClientBase).query(text, values),
      };
      await boss.insert(
        QUEUE,
        jobs.map((data) => ({ data })),
        { db },
      );
    },

    async unfinished() {
      const { rows } = await boss
        .getDb()
        .executeSql(`select count(*)::int as n from pgboss.job where name = $1 and state < 'completed'`, [
          QUEUE,
        ]);
      return rows[0]?.n ?? 0;
    },

    async clear() {
      await boss.deleteAllJobs(QUEUE);
    },

    async work(send, concurrency) {
      await start();
      await boss.work<Job>(
        QUEUE,
        { batchSize: BATCH, localConcurrency: Math.max(1, concurrency / BATCH), burstWhenBatchFull: true },
        async (jobs) => {
          await Promise.all(jobs.map((job) => send(job.data)));
        },
      );
      return { stop: () => boss.stop({ graceful: true }) };
    },

    async close() {
      await boss.stop({ graceful: false });
    },
  };
}
