// The per-endpoint rate (rateLimitPerSecond), enforced across every worker: a generic cell rate algorithm
// whose state is one timestamp on the endpoint (rate_next_at: the next free send slot), read and advanced
// by the claim under the endpoint row's lock. A claimed delivery takes the next slot; one whose slot is
// more than LOOKAHEAD away is not sent but pushed to its slot (throttled: its next_attempt_at is that slot,
// reserved for it), which is not an attempt and not a failure. A pushed delivery claimed at its slot sends
// without taking another. One found more than LATE past its slot (the workers were down) takes a new one,
// so the deliveries that waited out an outage do not all go at once.

/** How far ahead a claimed delivery may be paced by the worker that holds it (it waits, then sends). */
export const LOOKAHEAD_S = 0.25;
/** A reserved slot this far in the past is lost. */
const LATE_S = 1;

export interface Paced {
  /** when to send, in epoch seconds (database time) */
  sendAt?: number;
  /** not sent now: pushed to this slot (epoch seconds) */
  pushTo?: number;
}

export interface ToPace {
  throttled: boolean;
  /** its next_attempt_at, in epoch seconds */
  dueAt: number;
  /** leased behind its lane's head: never pushed, only left for a later claim ({}) */
  follower: boolean;
}

/**
 * Slots for one endpoint's claimed deliveries, in the order they are to go (epoch seconds, the database's
 * clock); the endpoint's next free slot after them.
 */
export function pace(
  deliveries: ToPace[],
  rate: number,
  nextFree: number | null,
  now: number,
): { paced: Paced[]; nextFree: number } {
  let slot = Math.max(nextFree ?? now, now);
  const paced = deliveries.map((delivery): Paced => {
    if (delivery.throttled && delivery.dueAt >= now - LATE_S)
      return { sendAt: Math.max(delivery.dueAt, now) };
    const mine = Math.max(slot, delivery.dueAt);
    if (mine > now + LOOKAHEAD_S && delivery.follower) return {};
    slot = mine + 1 / rate;
    return mine <= now + LOOKAHEAD_S ? { sendAt: mine } : { pushTo: mine };
  });
  return { paced, nextFree: slot };
}
