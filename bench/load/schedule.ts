// An open loop: `rate` operations a second for `seconds`, each started on its schedule whatever the
// others are doing, never before it is due, and timed from when it started. The one result line is
// summary()'s (its total is every operation scheduled).
import { summary } from './summary.ts';

/** Runs `operation(i)` on its schedule; it resolves true when it succeeded, false or throws when not. */
export async function onSchedule(rate: number, seconds: number, operation: (i: number) => Promise<boolean>) {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const running: Promise<void>[] = [];
  for (let i = 0; i < rate * seconds; i++) {
    // Sent early and timed from its due time, an operation would seem faster than it was (timed so,
    // projects/me's median came out below zero).
    await until(started + (i * 1000) / rate);
    const from = performance.now();
    running.push(
      operation(i).then(
        (ok) => {
          if (ok) latencies.push(performance.now() - from);
          else errors++;
        },
        () => {
          errors++;
        },
      ),
    );
  }
  await Promise.all(running);
  return summary(latencies, errors, (performance.now() - started) / 1000);
}

/**
 * Resolves once `due` (a performance.now() time) has come, never before: a timer may fire up to a
 * millisecond early, so the clock is read again. A time already passed resolves at once, so a loop that
 * fell behind catches up and its rate holds.
 */
export async function until(due: number) {
  for (let wait = due - performance.now(); wait > 0; wait = due - performance.now())
    await new Promise((resolve) => setTimeout(resolve, wait));
}
