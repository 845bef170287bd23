// What the event loop and the validation thread say to each other (validation-thread.ts, -worker.ts).
import type { FieldError } from '../lib/errors.ts';

export type Task =
  | { kind: 'compile'; id: number; key: number; schema: string }
  | { kind: 'validate'; id: number; key: number; data: string; at: string }
  | { kind: 'forget'; key: number };

export interface Answer {
  id: number;
  /** the problems found (compile: why the schema is not valid), null when none */
  problems: FieldError[] | null;
  /** how long the task took, in ms */
  ms: number;
}

/** Slots of the shared memory: the running task's id (0: none), and when it started (ms since 1970). */
export const RUNNING = 0;
export const SINCE = 1;
