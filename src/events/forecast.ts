// How many deliveries a publish will queue, as the last publish of its kind in this process queued: the
// answer of a publish ({eventId, deliveries}) is foreseen from it, so that the publish can go as a sole
// write (one statement with its idempotency claim and record). The statement checks the count, so a
// subscription changed since costs one miss (the ordinary way, which learns the new count), never a wrong
// answer. Publishes that reach an ordered lane go the ordinary way: their lanes are settled by a second
// statement.
import type { Queued } from './store.ts';

/** kinds of publish remembered at most; the oldest goes first */
const MAX_KINDS = 10_000;

export class DeliveryForecast {
  /** deliveries queued by the last publish of each kind; null when it reached an ordered lane */
  readonly #last = new Map<string, number | null>();

  /** The deliveries foreseen for a publish of this kind, or undefined when none can be. */
  of(projectId: string, type: string, orderingKey: string | undefined): number | undefined {
    return this.#last.get(kindOf(projectId, type, orderingKey)) ?? undefined;
  }

  /** What a publish of this kind queued, the ordinary way. */
  learn(projectId: string, type: string, orderingKey: string | undefined, queued: Queued) {
    const kind = kindOf(projectId, type, orderingKey);
    this.#last.delete(kind);
    this.#last.set(kind, queued.lanes.length > 0 ? null : queued.deliveries);
    if (this.#last.size > MAX_KINDS) this.#last.delete(this.#last.keys().next().value as string);
  }
}

/** A publish's kind: its project, its type, and whether it has an ordering key (which lanes follow). */
const kindOf = (projectId: string, type: string, orderingKey: string | undefined) =>
  `${projectId}|${type}|${orderingKey === undefined ? '' : 'keyed'}`;
