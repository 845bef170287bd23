// Settings bind at their 200 (contract 0.4; docs/decisions/settings-bind.md). What a process keeps in
// memory of the operators' settings (daily limits, capabilities' routes, upstreams and signing secrets)
// is believed only under a lease, and a change's answer waits until every process has applied it or
// lost its lease:
//
// - A change takes the next generation in its own transaction and announces it (NOTIFY, sent at commit).
// - A process LISTENs; on a change it forgets what the change touches (awaiting whatever that takes),
//   then writes that it has seen that generation.
// - Every BEAT_MS a process renews its lease, and the renewal takes only while it has seen the current
//   generation: one that missed an announcement (its listening connection dropped) forgets everything,
//   catches up, and renews then. Its lease lives LEASE_MS from when the renewal was sent.
// - The change's answer waits until each process renewed within LEASE_MS has seen its generation; a
//   process that has not has no lease left by the time the wait gives up on it, and a process without a
//   lease believes nothing it keeps: it reads anew, or answers 503 where it cannot.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Database, Db, TransactionHooks } from '../db/database.ts';

export const SETTINGS_CHANNEL = 'platform_settings';
/** how long a renewed lease lives */
export const LEASE_MS = 2000;
/** how often a lease is renewed: four renewals a lease, so one slow round trip loses nothing */
const BEAT_MS = 500;
/** a lease is taken to end this much before it does on the database's clock (the renewal's own latency) */
const MARGIN_MS = 100;
/** how often a change's answer looks again for the processes that have not applied it yet */
const POLL_MS = 5;

/** What a change touches: one project's daily limits, or one capability (its routes, secrets, life). */
export type SettingChange = { kind: 'limits'; projectId: string } | { kind: 'capability'; name: string };

/**
 * In the transaction of a change: takes the next generation, announces it with the commit, and puts the
 * change's answer behind every process having applied it (or having no lease left).
 */
export async function bindAtAnswer(
  { db, hooks }: { db: Db; hooks: Pick<TransactionHooks, 'beforeAnswer'> },
  change: SettingChange,
): Promise<void> {
  const generation = await announceChange(db, change);
  hooks.beforeAnswer((pool) => appliedEverywhere(pool, generation));
}

/** Takes the next generation and announces the change with the transaction's commit. */
async function announceChange(tx: Db, change: SettingChange): Promise<number> {
  const { rows } = await tx.query<{ generation: string }>(
    'update settings_generation set generation = generation + 1, changed_at = now() returning generation',
  );
  const generation = Number(rows[0]?.generation);
  await tx.query('select pg_notify($1, $2)', [SETTINGS_CHANNEL, JSON.stringify({ generation, ...change })]);
  return generation;
}

/** Resolves once every process with a live lease has seen `generation` (bounded by a lease's life). */
export async function appliedEverywhere(db: Db, generation: number): Promise<void> {
  const giveUp = Date.now() + LEASE_MS + 1000;
  for (;;) {
    const { rows } = await db.query<{ behind: number }>(
      `select count(*)::int as behind from settings_leases
        where seen < $1 and renewed_at > now() - make_interval(secs => $2)`,
      [generation, LEASE_MS / 1000],
    );
    if (rows[0]?.behind === 0 || Date.now() > giveUp) return;
    await sleep(POLL_MS);
  }
}

/** What a process keeps: told what a change touched, or that everything may have changed. */
export interface KeptSettings {
  forget(change: SettingChange): Promise<void>;
  /** everything may have changed, the last change having been made at `lastChangeMs` (epoch ms) */
  forgetAll(lastChangeMs: number): Promise<void>;
}

export class SettingsLease {
  readonly processId = randomUUID();
  readonly #db: Database;
  readonly #log: Logger;
  readonly #kept: KeptSettings;
  #seen = 0;
  /** when the lease ends, on this process's monotonic clock */
  #until = 0;
  #timer: NodeJS.Timeout | undefined;
  #renewing = false;
  #stopListening: (() => Promise<void>) | undefined;
  /** the announcements and catch-ups, applied one at a time in order */
  #applying: Promise<void> = Promise.resolve();

  constructor(deps: { db: Database; log: Logger; kept: KeptSettings }) {
    this.#db = deps.db;
    this.#log = deps.log;
    this.#kept = deps.kept;
  }

  /** Whether what this process keeps may be believed now. */
  held(): boolean {
    return performance.now() < this.#until;
  }

  /**
   * Reads where the changes stand, listens, then takes the lease: a change committed after the read is
   * heard, or found by the catch-up that follows every (re)connection of the listener.
   */
  async start(): Promise<void> {
    // The rows of processes killed long ago (a stopped one removes its own); they are never waited for.
    await this.#db.query(`delete from settings_leases where renewed_at < now() - interval '1 day'`);
    await this.#catchUp();
    this.#stopListening = await this.#db.listen(SETTINGS_CHANNEL, (payload) => this.#heard(payload));
    await this.#renew();
    this.#timer = setInterval(() => void this.#renew(), BEAT_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#until = 0;
    await this.#stopListening?.();
    await this.#db
      .query('delete from settings_leases where process_id = $1', [this.processId])
      .catch(() => {});
  }

  /** An announcement (or '' after the listener connected again: anything may have been missed). */
  #heard(payload: string) {
    this.#applying = this.#applying.then(async () => {
      const change = payload ? (JSON.parse(payload) as SettingChange & { generation: number }) : undefined;
      try {
        if (change && change.generation === this.#seen + 1) {
          await this.#kept.forget(change);
          await this.#mark(change.generation);
        } else await this.#catchUp();
      } catch (error) {
        this.#log.warn({ err: error }, 'applying a settings change failed; the lease will catch up');
      }
    });
  }

  /** Forgets everything kept, then marks the current generation seen (nothing when none was missed). */
  async #catchUp() {
    const { rows } = await this.#db.query<{ generation: string; changed_ms: string }>(
      'select generation, extract(epoch from changed_at) * 1000 as changed_ms from settings_generation',
    );
    const { generation, changed_ms: changedMs } = rows[0] as { generation: string; changed_ms: string };
    if (Number(generation) === this.#seen) return;
    await this.#kept.forgetAll(Number(changedMs));
    await this.#mark(Number(generation));
  }

  async #mark(generation: number) {
    this.#seen = Math.max(this.#seen, generation);
    await this.#db.query('update settings_leases set seen = greatest(seen, $2) where process_id = $1', [
      this.processId,
      this.#seen,
    ]);
  }

  /** Renews the lease, if this process has seen the current generation; else catches up, then renews. */
  async #renew() {
    if (this.#renewing) return;
    this.#renewing = true;
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const sent = performance.now();
        const { rowCount } = await this.#db.query(
          `insert into settings_leases (process_id, seen, renewed_at)
           select $1, $2, now() from settings_generation where generation <= $2
           on conflict (process_id) do update set seen = excluded.seen, renewed_at = excluded.renewed_at`,
          [this.processId, this.#seen],
        );
        if (rowCount) {
          this.#until = sent + LEASE_MS - MARGIN_MS;
          return;
        }
        this.#heard('');
        await this.#applying;
      }
    } catch (error) {
      this.#log.debug({ err: error }, 'renewing the settings lease failed');
    } finally {
      this.#renewing = false;
    }
  }
}
