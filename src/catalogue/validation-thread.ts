// Where a tenant's schema runs: a worker thread of its own, never the event loop every project shares.
// The loop hands it tasks (compile a schema, check data against one) and waits without working. The
// tasks of one turn of the loop go in one message, and their answers come back together, and
// each task has a budget: 1 s to compile, 100 ms to check. The thread writes which task it runs and since
// when into shared memory; a task past its budget ends the thread and is answered "over budget" (a 400
// naming the limit), and the tasks queued behind it run on a new thread. Compiled schemas are kept by
// their text, at most 8 MiB of it, and forgotten on both sides together.
import { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import type { FieldError } from '../lib/errors.ts';
import { type Answer, RUNNING, SINCE, type Task } from './validation-protocol.ts';

export const COMPILE_BUDGET_MS = 1000;
export const VALIDATE_BUDGET_MS = 100;
/** A schema whose compiling took this long is costly (a typical one takes 2-5 ms). */
const COSTLY_COMPILE_MS = 25;

/** What a task came to: its problems (none: null), or which budget it ran over. */
export type Outcome = { problems: FieldError[] | null } | { overBudget: 'compile' | 'validate' };

type Work = Exclude<Task, { kind: 'forget' }>;
/** A task's answer, or `again` when the thread ended under it for another task's sake. */
type Settled = { outcome: Outcome; ms: number } | 'again';
interface Pending {
  task: Work;
  settle: (settled: Settled) => void;
}

export class ValidationThread {
  #worker: Worker | undefined;
  readonly #running = new BigInt64Array(new SharedArrayBuffer(16));
  readonly #pending = new Map<number, Pending>();
  #queue: Task[] = [];
  #nextId = 1;
  #watch: NodeJS.Timeout | undefined;
  #watchAt = 0;
  /** each schema text compiled on the current thread, under the id of the task that compiled it */
  #compiled = this.#newCache();
  /** told of a schema that was slow to compile, or whose check ran over its budget */
  readonly #onCostly: (schema: string) => void;

  constructor(options: { onCostly?: (schema: string) => void } = {}) {
    this.#onCostly = options.onCostly ?? (() => {});
  }

  /** Compiles a schema (its JSON text) on the thread: its problems, or over budget. */
  async compile(schema: string): Promise<Outcome> {
    const key = await this.#keyOf(schema);
    return typeof key === 'number' ? { problems: null } : key;
  }

  /** Checks data (JSON text) against a schema (JSON text); problems point under `at`. */
  async validate(schema: string, data: string, at: string): Promise<Outcome> {
    for (;;) {
      const key = await this.#keyOf(schema);
      if (typeof key !== 'number') return key;
      const settled = await this.#run({ kind: 'validate', id: this.#nextId++, key, data, at });
      if (settled === 'again') continue;
      if ('overBudget' in settled.outcome) this.#onCostly(schema);
      return settled.outcome;
    }
  }

  async close() {
    clearTimeout(this.#watch);
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }

  /** The key the thread knows a schema by, compiling it first when it does not. */
  #keyOf(schema: string): Promise<number | Outcome> {
    const known = this.#compiled.get(schema);
    if (known) return known;
    const id = this.#nextId++;
    const compiling = this.#run({ kind: 'compile', id, key: id, schema }).then((settled) => {
      if (settled === 'again') return this.#keyOf(schema); // on the next thread, in its cache
      const { outcome, ms } = settled;
      if ('overBudget' in outcome || ms >= COSTLY_COMPILE_MS) this.#onCostly(schema);
      if ('problems' in outcome && outcome.problems === null) return id;
      // What did not compile is not kept: it may be declared again, or the budget was the thread's.
      this.#compiled.delete(schema);
      return outcome;
    });
    this.#compiled.set(schema, compiling);
    return compiling;
  }

  #newCache() {
    return new LRUCache<string, Promise<number | Outcome>>({
      maxSize: 8 * 1024 * 1024,
      sizeCalculation: (_, text) => text.length,
      // Evicted: the thread forgets it too (a cache replaced with its thread forgets nothing).
      dispose: (key) => void key.then((k) => typeof k === 'number' && this.#post({ kind: 'forget', key: k })),
    });
  }

  #run(task: Work): Promise<Settled> {
    return new Promise((settle) => {
      this.#pending.set(task.id, { task, settle });
      this.#post(task);
    });
  }

  /** Queues a task; the tasks of one turn of the loop (every request it read) go in one message. */
  #post(task: Task) {
    if (this.#queue.push(task) > 1) return;
    setImmediate(() => {
      const tasks = this.#queue;
      this.#queue = [];
      this.#thread().postMessage(tasks);
      this.#armWatch(VALIDATE_BUDGET_MS);
    });
  }

  #thread(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(new URL('./validation-worker.ts', import.meta.url), {
      workerData: { running: this.#running.buffer },
      // A schema that makes the compiler hoard memory ends the thread, not the process.
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    worker.unref();
    worker.on('message', (answers: Answer[]) => {
      for (const answer of answers) {
        const pending = this.#pending.get(answer.id);
        this.#pending.delete(answer.id);
        pending?.settle({ outcome: { problems: answer.problems }, ms: answer.ms });
      }
      this.#armWatch(VALIDATE_BUDGET_MS); // the next task starts now
    });
    worker.on('error', () => this.#replace(worker));
    worker.on('exit', () => this.#replace(worker));
    this.#worker = worker;
    return worker;
  }

  /**
   * While tasks are in flight, holds the running one to its budget: a check when the shortest budget of a
   * task starting now would run out (sooner than one already set), then again as the running task needs.
   */
  #armWatch(ms: number) {
    if (this.#pending.size === 0) return;
    const at = Date.now() + ms;
    if (this.#watch && this.#watchAt <= at) return;
    clearTimeout(this.#watch);
    this.#watchAt = at;
    this.#watch = setTimeout(() => {
      this.#watch = undefined;
      // Read in the reverse of the order the thread writes them: an id is never paired with an older start.
      const id = Number(Atomics.load(this.#running, RUNNING));
      const since = Number(Atomics.load(this.#running, SINCE));
      const pending = this.#pending.get(id);
      if (!pending) return this.#armWatch(VALIDATE_BUDGET_MS);
      const budget = pending.task.kind === 'compile' ? COMPILE_BUDGET_MS : VALIDATE_BUDGET_MS;
      const elapsed = Date.now() - since;
      if (elapsed < budget) return this.#armWatch(budget - elapsed);
      this.#pending.delete(id);
      pending.settle({ outcome: { overBudget: pending.task.kind }, ms: elapsed });
      const worker = this.#worker;
      if (worker) {
        this.#replace(worker);
        void worker.terminate();
      }
    }, ms);
    this.#watch.unref();
  }

  /**
   * A thread that ended (stopped over a budget, out of memory, or by a fault): what it had compiled is
   * gone; the task it was running is over budget, and every other task it held runs again on the next.
   */
  #replace(worker: Worker) {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    this.#compiled = this.#newCache();
    const id = Number(Atomics.load(this.#running, RUNNING));
    Atomics.store(this.#running, RUNNING, 0n);
    const held = [...this.#pending.values()];
    this.#pending.clear();
    for (const { task, settle } of held) {
      settle(task.id === id ? { outcome: { overBudget: task.kind }, ms: 0 } : 'again');
    }
  }
}
