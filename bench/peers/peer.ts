// What the peers benchmark asks of each queue library: queue delivery jobs in the same PostgreSQL
// transaction as an application row (where the library can), run a worker that sends each job as a signed
// webhook, and say how many jobs are not yet finished. One module per library; the worker process
// (worker.ts) and the driver (../peers.ts) both use them, through select.ts.
import type pg from 'pg';

/** One webhook to send: the same envelope, body and signature the service sends. */
export interface Job {
  url: string;
  eventId: string;
  type: string;
  timestamp: string;
  data: unknown;
}

export interface Peer {
  /** Creates the library's schema (or connects to Redis) once, before any round. */
  prepare(): Promise<void>;
  /** Queues jobs inside the caller's open transaction on `client`, beside its application row. */
  enqueue(client: pg.ClientBase, jobs: Job[]): Promise<void>;
  /** Queues jobs once that transaction has committed: for a queue outside PostgreSQL (BullMQ on Redis). */
  afterCommit?(jobs: Job[]): Promise<void>;
  /** Jobs queued and not yet completed (finished jobs recorded as such by the library). */
  unfinished(): Promise<number>;
  /** Empties the queue between rounds. */
  clear(): Promise<void>;
  /** In the worker process: processes jobs with `send`, `concurrency` at a time, until stopped. */
  work(send: (job: Job) => Promise<void>, concurrency: number): Promise<{ stop(): Promise<void> }>;
  close(): Promise<void>;
}

export const QUEUE = 'webhooks';
