// Ids that carry their time (UUID version 7, RFC 9562): the first 48 bits are milliseconds since the epoch.
// The history is partitioned by day (migration 0011), and a lookup by an id of version 7 reads only its
// day's partition: timeOf gives that day. Delivery ids carry their event's time, so they live with it.
import { v7 } from 'uuid';
import { randomPooled } from './random.ts';

/**
 * A new id carrying `at`. Its random bits come from the process's pool: uuid's own draw asks the system
 * for 16 bytes on every call, several times the cost of a slice of the pool (docs/decisions/measured-choices.md).
 */
export const newId = (at: Date): string => v7({ msecs: at.getTime(), random: randomPooled(16) });

/** The time a version-7 id carries; null for an id of another version (made before ids carried time). */
export function timeOf(id: string): Date | null {
  if (id[14] !== '7') return null;
  return new Date(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16));
}
