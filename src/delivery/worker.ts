// The delivery worker: claims due deliveries in batches (claim.ts), sends them concurrently (never inside
// a transaction), and records each attempt with the delivery's next state, in batches too (recorder.ts).
//
// What a claim gives is a list of runs: a delivery alone, or the head of an ordered lane with the run
// behind it, sent one after the other (the next only once the one before succeeded), each at its time
// (now, or its slot under its endpoint's rate).
//
// Flow control: at most `concurrency` runs in flight. Claims fill a local queue of HELD_PER_SLOT runs a
// slot (in flight and waiting), whose endpoints take the free slots in turn, each up to its cap; what is
// held of each endpoint, and how much of it a claim may take, is held.ts's; when to claim is the
// scheduler's (scheduler.ts). Woken at once by NOTIFY (other processes) or an in-process signal (same
// process), with a poll as the backstop. A crash loses nothing: a dead worker's leases are handed back as soon as another worker starts
// or beats its heartbeat (its liveness lock is gone with its connection), or else expire.
import { randomInt, randomUUID } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import { DELIVERIES_CHANNEL } from '../delivery-store/channel.ts';
import { claim } from '../delivery-store/claim.ts';
import { LOOKAHEAD_S } from '../delivery-store/pacing.ts';
import { type Completion, deliveryStore, WORKER_LOCK } from '../delivery-store/record.ts';
import type { ClaimedDelivery, Run } from '../delivery-store/run.ts';
import type { Config } from '../lib/config.ts';
import type { Keyring } from '../lib/crypto.ts';
import { signatureHeader } from '../lib/signature.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { Resolver } from '../webhooks/address-policy.ts';
import { destinations } from './brokers/index.ts';
import type { Credentials, Destination } from './destination.ts';
import { type Held, HeldRuns } from './held.ts';
import { type AttemptMetrics, countAttempt, nextState } from './outcome.ts';
import { AttemptRecorder } from './recorder.ts';
import { ClaimScheduler } from './scheduler.ts';
import { credentialsCache, headersCache, signingKeyCache, targetsCache } from './signing.ts';

const HEARTBEAT_MS = 10_000;
const CLAIM_BATCH = 200;
/**
 * Runs a worker holds for each send slot. Claims fill what is held, not the free slots: with only the
 * free slots to fill, claims were small, and a claim costs about as much for a few rows as for a batch
 * (docs/decisions/claims-fill-a-queue.md). An endpoint holds less than its mark and one claim's share
 * of it (held.ts).
 */
const HELD_PER_SLOT = 4;

export interface WorkerDeps {
  db: Database;
  config: Config;
  keyring: Keyring;
  resolve: Resolver;
  log: Logger;
  /** counts each attempt as the project's core/webhook_deliveries (usage/meter.ts) */
  meter?: { count(projectId: string, capability: string, metric: string): void };
  metrics?: Pick<Metrics, AttemptMetrics | 'throttled' | 'runLength' | 'recordRetries'>;
  /** in-process wake-ups when the API shares the process */
  signals?: EventEmitter<{ deliveries: [] }>;
}

export class DeliveryWorker {
  readonly id = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  // Its liveness lock's second key, in its heartbeat and its leases; random (two workers sharing one, a
  // chance of 1 in 2^31 a pair, would cost duplicates: each takes the other's leases once it stops).
  readonly lockKey = randomInt(1, 2 ** 31 - 1);
  private readonly deps: WorkerDeps;
  private readonly store: ReturnType<typeof deliveryStore>;
  private readonly destination: Destination;
  private readonly signingKeys: ReturnType<typeof signingKeyCache>;
  private readonly endpointHeaders: ReturnType<typeof headersCache>;
  private readonly credentials: ReturnType<typeof credentialsCache>;
  private readonly targets: ReturnType<typeof targetsCache>;
  private readonly leaseSeconds: number;
  private readonly concurrency: number;
  /** runs held at once (in flight and claimed to wait for a slot): what claims fill */
  private readonly capacity: number;
  private readonly held: HeldRuns;

  private running = false;
  private readonly scheduler: ClaimScheduler;
  private inFlight = 0;
  private readonly recorder: AttemptRecorder;
  private slotWake: { at: number; timer: NodeJS.Timeout } | undefined;
  /** endpoints that answered 410 in an attempt not yet recorded */
  private readonly gone = new Set<string>();
  private readonly timers: NodeJS.Timeout[] = [];
  private stopListening: (() => Promise<void>) | undefined;
  private idle: (() => void) | undefined;
  private readonly onSignal = () => this.wake();

  constructor(deps: WorkerDeps) {
    this.deps = deps;
    this.store = deliveryStore(deps.db);
    this.signingKeys = signingKeyCache(deps.keyring);
    this.endpointHeaders = headersCache(deps.keyring);
    this.credentials = credentialsCache(deps.keyring);
    this.targets = targetsCache(deps.keyring);
    this.recorder = new AttemptRecorder({
      db: deps.db,
      disableAfterDead: deps.config.disableAfterDead,
      log: deps.log,
      metrics: deps.metrics,
      // A 410's endpoint is disabled once recorded: claims need not leave it out any longer.
      recorded: (batch) => {
        for (const completion of batch) if (completion.gone) this.gone.delete(completion.endpointId);
      },
    });
    const { config } = deps;
    this.destination = destinations({
      db: deps.db,
      allowPrivate: config.webhookAllowPrivate,
      resolve: deps.resolve,
      timeoutMs: config.deliveryTimeoutMs,
      userAgent: `platform-core/${config.version}`,
    });
    // A lease outlives a send (its timeout) with room for waiting behind the per-endpoint cap; it is also
    // how long the deliveries of a worker cut off from the database wait before another takes them (60 s by
    // default; a worker that died is found sooner, by its liveness lock).
    this.leaseSeconds = Math.max(10, Math.ceil((4 * config.deliveryTimeoutMs) / 1000));
    this.concurrency = config.workerConcurrency;
    this.capacity = HELD_PER_SLOT * config.workerConcurrency;
    this.held = new HeldRuns(config.workerConcurrency);
    this.scheduler = new ClaimScheduler({
      free: () => this.capacity - this.inFlight - this.held.waitingCount,
      leftOut: () => this.held.atHighWater().concat([...this.gone]),
      belowHighWater: () => this.held.belowHighWater(),
      capacity: this.capacity,
      batch: CLAIM_BATCH,
      claim: (limit, leftOut) => this.claim(limit, leftOut),
      failed: (error) => deps.log.warn({ err: error }, 'claiming deliveries failed; the next poll retries'),
    });
  }

  /** Runs of deliveries being sent now (at most PLATFORM_WORKER_CONCURRENCY). */
  get inUse(): number {
    return this.inFlight;
  }

  async start(): Promise<void> {
    this.running = true;
    const startedAt = new Date();
    // Every notification may mean work; a payload names an endpoint whose pending deliveries were
    // cancelled: what this worker holds of them goes unsent. The listening connection holds the liveness
    // lock: it lives as long as this process (or its connection) does.
    this.stopListening = await this.deps.db.listen(
      DELIVERIES_CHANNEL,
      (endpointId) => {
        if (endpointId) this.drop(endpointId);
        this.wake();
      },
      { text: 'select pg_try_advisory_lock($1, $2)', values: [WORKER_LOCK, this.lockKey] },
    );
    const beat = () =>
      this.store
        .heartbeat({ id: this.id, host: hostname(), pid: process.pid, startedAt, lockKey: this.lockKey })
        .then(() => this.releaseDead())
        .catch((error) => this.deps.log.warn({ err: error }, 'worker heartbeat failed'));
    await beat();
    this.timers.push(
      setInterval(beat, HEARTBEAT_MS),
      setInterval(() => this.wake(), this.deps.config.workerPollMs),
    );
    this.deps.signals?.on('deliveries', this.onSignal);
    this.deps.log.info({ worker: this.id, concurrency: this.concurrency }, 'delivery worker started');
    this.scheduler.start();
  }

  /** Hands back the leases of workers that died (a restarted worker's first act), and claims them. */
  private async releaseDead() {
    const freed = await this.store.releaseDead(this.id);
    if (freed.workers === 0) return;
    this.deps.log.warn(freed, 'workers found dead; their leased deliveries are due again');
    if (freed.deliveries > 0) this.wake();
  }

  /**
   * Claims again at `at` (this process's clock), a little before a slot its claim pushed a delivery to,
   * so that it goes at its slot rather than at the next poll. One such wake-up is kept: the earliest.
   */
  private wakeAt(at: number) {
    const early = at - (LOOKAHEAD_S * 1000) / 2;
    if (this.slotWake && this.slotWake.at <= early) return;
    clearTimeout(this.slotWake?.timer);
    const timer = setTimeout(() => {
      this.slotWake = undefined;
      this.wake();
    }, early - Date.now());
    this.slotWake = { at: early, timer };
  }

  /** Claims more work soon (scheduler.ts): a wake-up from outside (NOTIFY, the signal, the poll, a slot). */
  wake(): void {
    if (this.running) this.scheduler.wake();
  }

  /** One claim: what it leases is held, waiting runs start, and a pushed delivery's slot sets a wake-up. */
  private async claim(limit: number, leftOut: string[]) {
    const token = randomUUID();
    // The claim's transaction reads the database's clock as it begins: this is the same moment here.
    const claimedHere = Date.now();
    const { runs, due, unfinished, pushed, nextSlot, claimedAt } = await claim(this.deps.db, {
      limit,
      share: this.held.shareOf(this.capacity - this.inFlight - this.held.waitingCount),
      leaseSeconds: this.leaseSeconds,
      token,
      holder: this.lockKey,
      leftOut,
    });
    for (const run of runs) this.held.add({ run, token, claimedHere, stopped: false });
    this.startWaiting();
    this.counted(runs, pushed);
    if (nextSlot !== null) this.wakeAt(claimedHere + nextSlot - claimedAt);
    return { due, unfinished };
  }

  /** Starts waiting runs while send slots are free (held.ts chooses which). */
  private startWaiting() {
    if (!this.running) return;
    for (const held of this.held.start(this.concurrency - this.inFlight)) void this.run(held);
  }

  /**
   * Sends a run's deliveries one after the other, each at its time; stops at a failure (the rest wait for
   * the one that failed), a cancel or pause, a stop, or when the next send could outlast the lease, and
   * hands back what it did not send.
   */
  private async run(held: Held) {
    this.inFlight++;
    const endpoint = held.run.endpointId;
    const { deliveries, claimedAt } = held.run;
    const leaseEnds = held.claimedHere + this.leaseSeconds * 1000;
    let sent = 0;
    try {
      for (const delivery of deliveries) {
        const wait = held.claimedHere + (delivery.send_at - claimedAt) - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const late = Date.now() + this.deps.config.deliveryTimeoutMs > leaseEnds;
        if (held.stopped || !this.running || late) break;
        const completion = await this.deliver(delivery, held.token);
        sent++;
        this.held.answered(endpoint, completion.durationMs);
        this.complete(completion);
        if (!completion.succeeded) break;
      }
    } catch (error) {
      this.deps.log.error(
        { err: error, delivery: deliveries[sent]?.id },
        'delivery failed unexpectedly; its lease will expire',
      );
      sent++;
    } finally {
      this.inFlight--;
      const left = this.held.finished(held);
      // What it did not send is due again once released: the scheduler hears of it then (a release that
      // fails leaves the lease to expire, and the poll finds them).
      const unsent = deliveries.slice(sent);
      if (unsent.length > 0)
        void this.store.release(unsent).then(
          () => this.running && this.scheduler.handedBack(endpoint),
          () => {},
        );
      if (deliveries[0]?.lane != null && sent > 0) void this.recorder.flush();
      this.startWaiting();
      if (this.inFlight === 0) this.idle?.();
      if (this.running) this.scheduler.runEnded(left, this.held.highWater, this.inFlight);
    }
  }

  /**
   * Lets go of what this worker holds of an endpoint and has not sent (its deliveries were cancelled, or
   * it was paused or disabled): runs in flight stop after their current send, waiting ones are handed back.
   */
  private drop(endpointId: string, release = true) {
    const waiting = this.held.drop(endpointId);
    if (release && waiting.length > 0)
      void this.store.release(waiting.flatMap((held) => held.run.deliveries)).catch(() => {});
  }

  /** One attempt: sign, send through the destination, and decide the delivery's next state. */
  private async deliver(delivery: ClaimedDelivery, token: string): Promise<Completion> {
    // The signature's timestamp is the attempt's start, to the second: the log says what was sent from it.
    const startedAt = new Date();
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    const secrets = this.signingKeys(delivery.endpoint_id, delivery.active_secret, delivery.previous_secret);
    const extra = this.endpointHeaders(delivery.endpoint_id, delivery.headers_sealed);
    const credentials = this.credentials(delivery.endpoint_id, delivery);
    const result = await this.destination.send({
      endpointId: delivery.endpoint_id,
      url: delivery.url,
      headers: {
        'webhook-id': delivery.event_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(secrets, delivery.event_id, timestamp, delivery.body),
      },
      extra,
      body: delivery.body,
      credentials,
      eventType: delivery.event_type,
      projectId: delivery.project_id,
      eventCreatedAt: delivery.event_created_at,
      target: this.targets(delivery.endpoint_id, delivery),
    });
    const succeeded = result.delivered;
    const gone = result.statusCode === 410;
    // At once, and until the attempt is recorded (which disables the endpoint and cancels the rest): what
    // this worker holds of it is let go of without handing it back, and claims leave it out.
    if (gone) {
      this.gone.add(delivery.endpoint_id);
      this.drop(delivery.endpoint_id, false);
    }
    return {
      projectId: delivery.project_id,
      id: delivery.id,
      endpointId: delivery.endpoint_id,
      lane: delivery.lane,
      gone,
      eventCreatedAt: delivery.event_created_at,
      leaseToken: token,
      attemptsBefore: delivery.attempts,
      ...nextState(delivery.attempts + 1, succeeded, result, this.deps.config.retryScheduleSeconds),
      startedAt,
      durationMs: result.durationMs,
      statusCode: result.statusCode,
      error: result.error ?? (succeeded ? null : `HTTP ${result.statusCode}`),
      succeeded,
      responseBody: result.responseBody,
      sentHeaders: sentHeaders(extra, credentials),
    };
  }

  /** A claim's figures: the runs it handed over, and the deliveries it pushed to their rate's slots. */
  private counted(runs: Run[], pushed: number) {
    const metrics = this.deps.metrics;
    if (!metrics) return;
    for (const run of runs) metrics.runLength.observe(run.deliveries.length);
    if (pushed > 0) metrics.throttled.inc(pushed);
  }

  private complete(completion: Completion) {
    this.deps.meter?.count(completion.projectId, 'core', 'webhook_deliveries');
    if (this.deps.metrics) countAttempt(this.deps.metrics, completion);
    this.recorder.add(completion);
  }

  /** Stops claiming, lets sends in flight finish (each is bounded by the delivery timeout), records them. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.scheduler.stop();
    for (const timer of this.timers) clearInterval(timer);
    clearTimeout(this.slotWake?.timer);
    this.deps.signals?.off('deliveries', this.onSignal);
    await this.stopListening?.();
    // Claimed deliveries that never started go back at once rather than waiting out their lease, and the
    // other workers hear of them now rather than at their next poll (a rolling deploy stops every worker
    // in turn). A release or notification that fails leaves them to the lease and the poll.
    const unstarted = this.held.dropWaiting().flatMap((held) => held.run.deliveries);
    if (unstarted.length > 0)
      await this.store
        .release(unstarted)
        .then(() => this.deps.db.notify(DELIVERIES_CHANNEL, ''))
        .catch(() => {});
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    await this.recorder.flush();
    await this.store.forgetWorker(this.id).catch(() => {});
    await this.destination.close();
    this.deps.log.info({ worker: this.id }, 'delivery worker stopped');
  }
}

/** The names of what an attempt sent beyond the Standard Webhooks headers, for its log; null for nothing. */
function sentHeaders(extra: Record<string, string> | undefined, credentials: Credentials | undefined) {
  if (!extra && !credentials?.oauth) return null;
  const names = Object.keys(extra ?? {});
  if (credentials?.oauth) names.push('authorization');
  return names.join(',');
}
