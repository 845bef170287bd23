// BullMQ on the machine's Redis (which keeps nothing on disk here: no RDB, no AOF). Redis is outside the
// application's transaction: jobs are added once the application's rows are committed. Completed jobs
// are kept, as by default; each round starts from an empty database of Redis's own.
import { Queue, Worker } from 'bullmq';
import { type Job, type Peer, QUEUE } from './peer.ts';

export function bullmq(redisUrl: string): Peer {
  const connection = { url: redisUrl, maxRetriesPerRequest: null };
  const queue = new Queue<Job>(QUEUE, { connection });
  return {
    async prepare() {
      await queue.waitUntilReady();
    },

    async enqueue() {},

    async afterCommit(jobs) {
      await queue.addBulk(jobs.map((data) => ({ name: 'send', data })));
    },

    async unfinished() {
      const counts = await queue.getJobCounts(
        'waiting',
        'active',
        'delayed',
        'prioritized',
        'waiting-children',
      );
      return Object.values(counts).reduce((sum, n) => sum + n, 0);
    },

    async clear() {
      await queue.obliterate({ force: true });
    },

    async work(send, concurrency) {
      const worker = new Worker<Job>(QUEUE, async (job) => send(job.data), { connection, concurrency });
      worker.on('error', () => {});
      await worker.waitUntilReady();
      return { stop: () => worker.close() };
    },

    async close() {
      await queue.close();
    },
  };
}
