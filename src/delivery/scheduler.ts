// When the delivery worker claims: a small state machine, so that the flow control reads as states and
// transitions rather than as flags (in the spirit of graphile-worker's LocalQueue).
//
//   STOPPED  ──start()──▶ WAITING
//   WAITING  ──wake()───▶ CLAIMING        when a claim is worth making (free capacity, and something may be due)
//   CLAIMING ──wake()───▶ CLAIMING_AGAIN  a claim runs: one more follows it, whatever the wake-ups meanwhile
//   CLAIMING ──claimed──▶ CLAIMING        again at once while the last claim was full and free capacity is worth it
//            ──claimed──▶ WAITING         otherwise (a failed claim too: the next poll retries)
//   any      ──stop()───▶ STOPPED         a claim in flight ends; nothing follows it
//
// A wake-up comes from outside (NOTIFY, the in-process signal, the poll, a slot's time) or from the worker
// itself when one of its runs ends. The worker's own wake-ups are for the endpoints it holds: they claim
// only when something new may be claimable, which the scheduler tells from the facts it keeps:
// - backlog: the last claim took as many as it asked for, so more may be due;
// - exhausted: the endpoints a claim left out when it found fewer due than it could take, since the last
//   wake-up from outside. Every other due delivery was found then;
// - unfinished: the endpoints that may still have deliveries due though the queue was found short: those
//   the claim found more of than it took (their share), and those whose deliveries the worker handed back.
// While every exhausted or unfinished endpoint is left out (at its high-water mark), a claim could only walk the
// whole queue to find nothing: half the claims did so at 20,000 due to one endpoint, each woken by a run
// ending while the last claim filled the endpoint's high-water mark, and half again beside an endpoint that hung
// (held below its high-water mark with nothing more due: docs/decisions/no-claim-at-the-mark.md).

export type SchedulerState = 'STOPPED' | 'WAITING' | 'CLAIMING' | 'CLAIMING_AGAIN';

/** What the scheduler reads of the worker's hold, and how it claims (held.ts, claim.ts). */
export interface ClaimPlan {
  /** runs the worker may still hold (its capacity, less what is in flight and waiting) */
  free(): number;
  /** endpoints a claim leaves out: those at their high-water mark, and those that answered 410 */
  leftOut(): string[];
  /** whether some endpoint held is below its high-water mark (a claim could find it more) */
  belowHighWater(): boolean;
  /** the most runs the worker holds at once */
  capacity: number;
  /** the most one claim asks for */
  batch: number;
  /**
   * claims up to `limit`, none of `leftOut`'s: how many it found due, and the endpoints it found more of
   * than it took
   */
  claim(limit: number, leftOut: string[]): Promise<{ due: number; unfinished: string[] }>;
  /** a claim that failed (the next poll retries) */
  failed(error: unknown): void;
}

export class ClaimScheduler {
  #state: SchedulerState = 'STOPPED';
  readonly #plan: ClaimPlan;
  #backlog = false;
  #exhausted: Set<string> | null = null;
  #unfinished = new Set<string>();
  /** endpoints whose deliveries were handed back while the claim in flight ran (it may not have seen them) */
  readonly #handedBackDuringClaim = new Set<string>();
  /** wake-ups from outside so far (one during a claim makes what it found out of date) */
  #outsideWakes = 0;

  constructor(plan: ClaimPlan) {
    this.#plan = plan;
  }

  get state(): SchedulerState {
    return this.#state;
  }

  start(): void {
    this.#state = 'WAITING';
    this.wake();
  }

  stop(): void {
    this.#state = 'STOPPED';
  }

  /**
   * Claims more work soon; calls made while a claim runs coalesce into one more. `outside` is false for
   * the worker's own wake-up when one of its runs ends.
   */
  wake(outside = true): void {
    if (this.#state === 'STOPPED') return;
    if (outside) {
      this.#exhausted = null;
      this.#outsideWakes++;
    }
    if (this.#state === 'CLAIMING' || this.#state === 'CLAIMING_AGAIN') {
      this.#state = 'CLAIMING_AGAIN';
      return;
    }
    void this.#claimLoop();
  }

  /**
   * A run ended and left its endpoint with `left` runs held (`highWater` its high-water mark), `inFlight` runs sending:
   * claims again when something new may be claimable (this endpoint is no longer left out, or nothing is
   * in flight), or when the free capacity is worth a claim.
   */
  runEnded(left: number, highWater: number, inFlight: number): void {
    if (left === highWater - 1 || inFlight === 0) this.wake(false);
    else if (this.#state === 'WAITING' && this.worthClaiming()) this.wake(false);
  }

  /**
   * Deliveries of `endpoint` were handed back, due again now that their release has committed: the next
   * claim may find them. It does not wake the scheduler: a run that stopped at a failure hands back the
   * rest, and a claim at once would send them to the failing endpoint one by one, a claim each.
   */
  handedBack(endpoint: string): void {
    this.#unfinished.add(endpoint);
    this.#handedBackDuringClaim.add(endpoint);
  }

  /**
   * Whether free capacity is worth a claim: the last claim was full (more may be due), a quarter of the
   * capacity is free (not one row at a time), and some endpoint held is not left out. Other endpoints'
   * deliveries are found by wake-ups from outside and the poll.
   */
  worthClaiming(): boolean {
    if (!this.#backlog) return false;
    if (this.#plan.free() < Math.max(1, Math.floor(this.#plan.capacity / 4))) return false;
    return this.#plan.belowHighWater();
  }

  async #claimLoop() {
    this.#state = 'CLAIMING';
    try {
      for (;;) {
        const free = this.#plan.free();
        const leftOut = this.#plan.leftOut();
        if (free <= 0 || this.#nothingElseDue(leftOut)) break;
        const limit = Math.min(free, this.#plan.batch);
        const wakes = this.#outsideWakes;
        this.#handedBackDuringClaim.clear();
        const { due, unfinished } = await this.#plan.claim(limit, leftOut);
        this.#learn(due < limit && wakes === this.#outsideWakes, leftOut, unfinished);
        this.#backlog = due === limit;
        // What wake() and stop() made of the state while the claim ran (read anew: the compiler assumes
        // it is still the CLAIMING set above).
        const now = this.#now();
        if (now === 'STOPPED') return;
        this.#state = 'CLAIMING';
        const again = now === 'CLAIMING_AGAIN';
        if (!again && !this.worthClaiming()) break;
      }
    } catch (error) {
      this.#plan.failed(error);
    }
    if (this.#now() !== 'STOPPED') this.#state = 'WAITING';
  }

  #now(): SchedulerState {
    return this.#state;
  }

  /**
   * What a claim tells of the queue. One that found it short (and no wake-up from outside came meanwhile)
   * saw every due delivery but those of `leftOut`: only the endpoints it took less of than it found, and
   * those whose deliveries were handed back while it ran, may have more. One that found it full adds what
   * it took less of to what is known.
   */
  #learn(short: boolean, leftOut: string[], unfinished: string[]) {
    if (short) {
      this.#exhausted = new Set(leftOut);
      this.#unfinished = new Set([...unfinished, ...this.#handedBackDuringClaim]);
    } else for (const endpoint of unfinished) this.#unfinished.add(endpoint);
  }

  /**
   * Whether a claim leaving out `leftOut` could only walk the whole queue to find nothing. One that leaves
   * nothing out walks past nothing: it costs a look at the index's head, and an idle worker makes it.
   */
  #nothingElseDue(leftOut: string[]): boolean {
    if (this.#exhausted === null || leftOut.length === 0) return false;
    for (const endpoint of this.#exhausted) if (!leftOut.includes(endpoint)) return false;
    for (const endpoint of this.#unfinished) if (!leftOut.includes(endpoint)) return false;
    return true;
  }
}
