/** The time the service acts on. Tests substitute a clock they can move (idempotency expiry, usage days). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A day in milliseconds (the service's days are UTC days: usage, limits, partitions). */
export const DAY_MS = 86_400_000;

/** The UTC day of a time, as PostgreSQL reads a date ('2026-11-28'): usage's days, partitions' names. */
export const utcDay = (time: Date | number): string =>
  (typeof time === 'number' ? new Date(time) : time).toISOString().slice(0, 10);

/** A clock tests can set and advance. */
export function manualClock(
  start = new Date(),
): Clock & { advance(ms: number): void; set(date: Date): void } {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    advance: (ms) => {
      current += ms;
    },
    set: (date) => {
      current = date.getTime();
    },
  };
}
