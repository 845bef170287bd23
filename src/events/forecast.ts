// How many deliveries a publish will queue, as the last publish of its kind in this process queued: the
// answer of a publish ({eventId, deliveries}) is predicted from it, so that the publish can go as a sole
// write (one statement with its idempotency claim and record). The statement checks the count, so a
// subscription changed since costs one miss (the ordinary way, which learns the new count), never a wrong
// answer. Publishes that reach an ordered lane go the ordinary way: their lanes are settled by a second
// statement.
import { LRUCache } from 'lru-cache';
import type { Queued } from '../delivery-store/enqueue.ts';

export class DeliveryForecast {
  /** deliveries queued by the last publish of each kind, or 'ordered'; 10,000 kinds at most */
  readonly #last = new LRUCache<string, number | 'ordered'>({ max: 10_000 });

  /** The deliveries predicted for a publish of this kind, or undefined when none can be. */
  of(projectId: string, type: string, orderingKey: string | undefined): number | undefined {
    const last = this.#last.get(kindOf(projectId, type, orderingKey));
    return last === 'ordered' ? undefined : last;
  }

  /** What a publish of this kind queued, the ordinary way. */
  learn(projectId: string, type: string, orderingKey: string | undefined, queued: Queued) {
    const last = queued.lanes.length > 0 ? 'ordered' : queued.deliveries;
    this.#last.set(kindOf(projectId, type, orderingKey), last);
  }
}

/** A publish's kind: its project, its type, and whether it has an ordering key (which lanes follow). */
const kindOf = (projectId: string, type: string, orderingKey: string | undefined) =>
  `${projectId}|${type}|${orderingKey === undefined ? '' : 'keyed'}`;
