// The validation thread's own code: it compiles the schemas it is sent and checks event data against them,
// task after task, writing which task runs and since when into memory the event loop's side reads, so
// that side can stop a task that runs over its budget by ending the thread (validation-thread.ts).
import { parentPort, workerData } from 'node:worker_threads';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { createEngine, problemsOf } from './engine.ts';
import { type Answer, RUNNING, SINCE, type Task } from './validation-protocol.ts';

const port = parentPort;
if (!port) throw new Error('validation-worker.ts runs as a worker thread');
const running = new BigInt64Array(workerData.running as SharedArrayBuffer);
const engine = createEngine();
// Compiled once at start, so the thread's first task does not pay for warming the compiler up.
engine.compile({ type: 'object', properties: { warm: { type: 'string', format: 'date-time' } } });
const compiled = new Map<number, { schema: object; validate: ValidateFunction }>();

function run(task: Exclude<Task, { kind: 'forget' }>): Omit<Answer, 'ms'> {
  if (task.kind === 'compile') {
    const schema = JSON.parse(task.schema) as object;
    try {
      compiled.set(task.key, { schema, validate: engine.compile(schema) });
      return { id: task.id, problems: null };
    } catch (error) {
      const detail = `not a valid JSON Schema (2020-12): ${(error as Error).message}`;
      return { id: task.id, problems: [{ pointer: '', detail }] };
    }
  }
  const entry = compiled.get(task.key);
  if (!entry) throw new Error(`schema ${task.key} was not compiled in this thread`);
  const valid = entry.validate(JSON.parse(task.data));
  return { id: task.id, problems: valid ? null : problemsOf(entry.validate, task.at) };
}

/** Answers are sent together, unless the ones held have waited this long for the rest. */
const HOLD_ANSWERS_MS = 2;

port.on('message', (tasks: Task[]) => {
  let answers: Answer[] = [];
  let heldSince = Date.now();
  for (const task of tasks) {
    if (task.kind === 'forget') {
      const entry = compiled.get(task.key);
      if (entry) engine.removeSchema(entry.schema);
      compiled.delete(task.key);
      continue;
    }
    const started = Date.now();
    Atomics.store(running, SINCE, BigInt(started));
    Atomics.store(running, RUNNING, BigInt(task.id));
    const answer = run(task);
    Atomics.store(running, RUNNING, 0n);
    const now = Date.now();
    answers.push({ ...answer, ms: now - started });
    if (now - heldSince >= HOLD_ANSWERS_MS) {
      port.postMessage(answers);
      answers = [];
      heldSince = now;
    }
  }
  if (answers.length > 0) port.postMessage(answers);
});
