// What a delivery worker holds: the runs it claimed, per endpoint, waiting for a send slot or being sent,
// and how quickly each endpoint answers. The worker's flow control reads it (worker.ts): which endpoints
// a claim leaves out, how many of each endpoint's a claim may take, and which run starts next.
//
// An endpoint sends at most `perEndpoint` runs at once (its cap), so that a slow or dead receiver cannot
// take every slot from the healthy ones. One holding twice that (its high-water mark) is left out of claims; one
// that drops below it is claimed for again while it still has a cap's worth in flight, so that its queue
// does not run dry during the claim. A claim takes at most a high-water mark's worth of one endpoint's, unless the
// endpoint answers quickly (it then needs more waiting to keep its slots busy from one claim to the next,
// and may take half the free capacity): one that is slow or does not answer cannot fill the queue and starve the
// others until its sends time out.
import type { Run } from '../delivery-store/run.ts';

/**
 * An endpoint whose last answer came within this is sending quickly: a claim may take more of its
 * deliveries than a high-water mark's worth. A slower one takes twice this or more to empty its high-water mark, far longer
 * than a claim takes. (Leasing only a high-water mark's worth of a receiver answering at once cost it throughput:
 * docs/decisions/claim-shares.md.) An endpoint timing out, or one not yet heard from, is not quick.
 */
const QUICK_MS = 1000;
/**
 * Endpoints whose speed is remembered, the most recently heard from: an endpoint the worker has just
 * emptied keeps its speed for its next claim (forgotten, it was claimed for a high-water mark's worth at a time).
 */
const REMEMBERED = 10_000;

/** A run a worker holds: claimed with `token`, at `claimedHere` (this process's clock). */
export interface Held {
  run: Run;
  token: string;
  claimedHere: number;
  /** set when its endpoint's deliveries were cancelled or held: it sends no more */
  stopped: boolean;
}

export class HeldRuns {
  /** runs one endpoint may send at once */
  private readonly perEndpoint: number;
  /** runs held (sending and waiting) at which an endpoint is left out of claims */
  readonly highWater: number;
  /** runs in flight and claimed-but-waiting, per endpoint */
  private readonly load = new Map<string, number>();
  private readonly waiting = new Map<string, Held[]>();
  /** runs in flight, per endpoint (so that a cancel or a pause stops them between sends) */
  private readonly sending = new Map<string, Set<Held>>();
  /** how long each endpoint took to answer its last send (ms), least recently heard from first */
  private readonly answeredIn = new Map<string, number>();

  constructor(concurrency: number) {
    this.perEndpoint = Math.max(1, Math.floor(concurrency / 4));
    this.highWater = 2 * this.perEndpoint;
  }

  get waitingCount(): number {
    let n = 0;
    for (const queue of this.waiting.values()) n += queue.length;
    return n;
  }

  add(held: Held): void {
    const endpoint = held.run.endpointId;
    this.load.set(endpoint, (this.load.get(endpoint) ?? 0) + 1);
    const queue = this.waiting.get(endpoint);
    if (queue) queue.push(held);
    else this.waiting.set(endpoint, [held]);
  }

  /**
   * Takes the waiting runs to start, up to `slots` of them, taking endpoints in turn (one whose run starts
   * goes to the back of the line) and skipping those at their cap; they count as sending from now on.
   */
  start(slots: number): Held[] {
    const started: Held[] = [];
    for (const [endpoint, queue] of this.waiting) {
      if (started.length >= slots) break;
      const sending = this.sending.get(endpoint) ?? new Set();
      if (sending.size >= this.perEndpoint) continue;
      const held = queue.shift() as Held;
      this.waiting.delete(endpoint);
      if (queue.length > 0) this.waiting.set(endpoint, queue);
      this.sending.set(endpoint, sending.add(held));
      started.push(held);
    }
    return started;
  }

  /** An endpoint answered a send in `ms`. */
  answered(endpoint: string, ms: number): void {
    this.answeredIn.delete(endpoint);
    this.answeredIn.set(endpoint, ms);
    if (this.answeredIn.size > REMEMBERED)
      this.answeredIn.delete(this.answeredIn.keys().next().value as string);
  }

  /** A run is over (sent, stopped or failed); how many runs its endpoint still holds. */
  finished(held: Held): number {
    const endpoint = held.run.endpointId;
    const sending = this.sending.get(endpoint);
    sending?.delete(held);
    if (sending?.size === 0) this.sending.delete(endpoint);
    return this.setLoad(endpoint, (this.load.get(endpoint) ?? 1) - 1);
  }

  /**
   * Lets go of what is held of an endpoint and not sent: runs in flight stop after their current send,
   * and the waiting ones are returned (to be handed back, or not).
   */
  drop(endpoint: string): Held[] {
    for (const held of this.sending.get(endpoint) ?? []) held.stopped = true;
    const waiting = this.waiting.get(endpoint) ?? [];
    this.waiting.delete(endpoint);
    this.setLoad(endpoint, (this.load.get(endpoint) ?? 0) - waiting.length);
    return waiting;
  }

  /** Every waiting run, no longer held (the worker is stopping). */
  dropWaiting(): Held[] {
    const all = [...this.waiting.values()].flat();
    for (const held of all) this.finished(held);
    this.waiting.clear();
    return all;
  }

  /** Endpoints at their high-water mark: a claim leaves them out. */
  atHighWater(): string[] {
    return [...this.load].filter(([, n]) => n >= this.highWater).map(([endpoint]) => endpoint);
  }

  /** Whether a claim could find something: an endpoint held is below its high-water mark, or none is held. */
  belowHighWater(): boolean {
    for (const load of this.load.values()) if (load < this.highWater) return true;
    return this.load.size === 0;
  }

  /**
   * How many of an endpoint's due deliveries a claim with `free` capacity may take: half the free capacity for one that
   * answers quickly, a high-water mark's worth for any other.
   */
  shareOf(free: number): (endpoint: string) => number {
    const quick = Math.max(this.highWater, Math.floor(free / 2));
    return (endpoint) => ((this.answeredIn.get(endpoint) ?? QUICK_MS) < QUICK_MS ? quick : this.highWater);
  }

  private setLoad(endpoint: string, load: number): number {
    if (load > 0) this.load.set(endpoint, load);
    else this.load.delete(endpoint);
    return Math.max(0, load);
  }
}
