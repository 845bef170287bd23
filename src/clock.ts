/** The time the service acts on. Tests substitute a clock they can move (idempotency expiry, usage days). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A day in milliseconds (the service's days are UTC days: usage, limits, partitions). */
export const DAY_MS = 86_400_000;

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
