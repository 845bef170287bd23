// Metering for capabilities (docs/capabilities.md): usage records counted exactly once, reservations
// against daily limits, and a metric's figures of the day. A record's id is its idempotency: a repeat, in
// a batch or a later one, within 35 days, counts as a duplicate, and the first wins. Records and their
// counts commit together, so a batch answered 200 is counted once whatever failed around it (a retry
// after a timeout, a process killed, PostgreSQL restarted). Reservations take their allowance as Core's
// own daily limits do (usage/limits.ts, in blocks from usage_quota): used + reserved never passes the
// limit, in any process, and a reservation writes no row that every other one writes too.

import type { Work } from '../../audit/work.ts';
import type { Database } from '../../db/database.ts';
import { write } from '../../idempotency/write.ts';
import { type Clock, DAY_MS, utcDay } from '../../lib/clock.ts';
import { type FieldError, notFound, PlatformError } from '../../lib/errors.ts';
import { newId, timeOf } from '../../lib/ids.ts';
import type { KnownProjects } from '../../projects/known.ts';
import type { CapabilityRegistry } from '../../registry.ts';
import type { UsageLimits } from '../../usage/limits.ts';
import { meteringStore, type ReservationRow, type UsageRecord } from './store.ts';

const MAX_LATE_MS = 35 * DAY_MS;
const MAX_EARLY_MS = 5 * 60_000;
/** A reservation is never granted from what an outage guesses of the day: the invariant holds, or 503. */
const STRICT = { strict: true };

export interface RecordInput {
  id: string;
  projectId: string;
  metric: string;
  value: number;
  time?: string;
}

export interface MeteringDeps {
  /** the pool: what a batch of records is written through, in a transaction of its own */
  pool: Database;
  /** which projects exist */
  projects: KnownProjects;
  /** makes the metering partitions around now, once a day (partitions.ts) */
  partitionsReady: (now: Date) => Promise<void>;
  clock: Clock;
  registry: CapabilityRegistry;
  /** the daily limits and the allowances this process holds of them */
  limits: UsageLimits;
  /** the capability's declared metrics as they are now (not as last read), when one seems unknown */
  declaredMetrics: (capability: string) => Promise<string[]>;
}

const refused = (errors: FieldError[]) =>
  new PlatformError('VALIDATION_FAILED', 'a record is not valid: nothing was recorded', { errors });

/**
 * Records go through the pool (their ids are their idempotency); reservations are written in the unit of
 * work's transaction, so that an idempotent request's record commits with them.
 */
export const meteringService = ({ db, hooks }: Work, deps: MeteringDeps) => {
  const { pool } = deps;

  /** The capability's metrics, as last read, or as they are now when one asked for is not among them. */
  async function metricsOf(capability: string, wanted: Iterable<string>): Promise<Set<string>> {
    const known = new Set(deps.registry.get(capability)?.metrics ?? []);
    for (const metric of wanted)
      if (!known.has(metric)) return new Set(await deps.declaredMetrics(capability));
    return known;
  }

  /** Each record checked (its project, metric and time); a 400 pointing at every bad one, else the rows. */
  async function checked(capability: string, inputs: RecordInput[]): Promise<UsageRecord[]> {
    const now = deps.clock.now().getTime();
    const metrics = await metricsOf(capability, new Set(inputs.map((r) => r.metric)));
    const projects = await deps.projects.existing(inputs.map((r) => r.projectId));
    const errors: FieldError[] = [];
    const records = inputs.map((input, i) => {
      const at = input.time === undefined ? now : Date.parse(input.time);
      if (!projects.has(input.projectId))
        errors.push({ pointer: `/records/${i}/projectId`, detail: 'no such project' });
      if (!metrics.has(input.metric))
        errors.push({
          pointer: `/records/${i}/metric`,
          detail: `${capability} declares no metric ${input.metric}`,
        });
      if (!(at >= now - MAX_LATE_MS && at <= now + MAX_EARLY_MS))
        errors.push({ pointer: `/records/${i}/time`, detail: 'from 35 days ago to 5 minutes ahead' });
      return {
        id: input.id,
        projectId: input.projectId,
        metric: input.metric,
        value: input.value,
        day: utcDay(new Date(at)),
      };
    });
    if (errors.length > 0) throw refused(errors.slice(0, 20));
    return records;
  }

  /** The limit of a project's metric today: its own, the capability's default, or none. */
  const limitOf = async (projectId: string, capability: string, metric: string) =>
    (await deps.limits.limitsOf(projectId)).get(`${capability}/${metric}`);

  /**
   * Takes `amount` from this process's allowance of the day, or throws the 429. Refused, it first gives
   * back what the metric's lapsed reservations hold (housekeeping would, within 5 s), and tries again.
   * A function that gives the amount back.
   */
  async function take(projectId: string, capability: string, metric: string, amount: number, day: string) {
    try {
      return await deps.limits.take(projectId, capability, metric, amount, STRICT);
    } catch (error) {
      const refused = error instanceof PlatformError && error.code === 'USAGE_LIMIT_EXCEEDED';
      if (!refused || (await meteringStore(pool).expire(projectId, day, capability, metric)) === 0)
        throw error;
      deps.limits.forgetSpent(projectId, capability, metric);
      return deps.limits.take(projectId, capability, metric, amount, STRICT);
    }
  }

  /** What a settled reservation did not use, back to this process's allowance once the settling commits. */
  const credit = (capability: string, row: ReservationRow, unused: number) =>
    hooks.onCommit(() => {
      void deps.limits.credit(row.project_id, capability, row.metric, row.day, unused).catch(() => {});
    });

  return {
    /** Records a batch: {accepted, duplicates}. */
    async record(capability: string, inputs: RecordInput[]) {
      const records = await checked(capability, inputs);
      await deps.partitionsReady(deps.clock.now());
      const accepted = await pool.transaction(async (tx) => {
        const store = meteringStore(tx);
        return store.ingest(capability, await store.lockGeneration(), records);
      });
      return { accepted, duplicates: records.length - accepted };
    },

    /** A reservation of today's allowance; past the limit a 429 as Core's own limits answer. */
    async reserve(
      capability: string,
      input: { projectId: string; metric: string; amount: number; ttlSeconds?: number },
    ) {
      const { projectId, metric, amount } = input;
      if (!(await metricsOf(capability, [metric])).has(metric)) {
        const detail = `${capability} declares no metric ${metric}`;
        throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer: '/metric', detail }] });
      }
      if (!(await deps.projects.existing([projectId])).has(projectId)) throw notFound('project');
      const now = deps.clock.now();
      const day = utcDay(now);
      hooks.onRollback(await take(projectId, capability, metric, amount, day));
      await deps.partitionsReady(now);
      const id = newId(now);
      const expiresAt = new Date(now.getTime() + (input.ttlSeconds ?? 60) * 1000);
      const reservation = { capability, id, projectId, metric, day, amount, expiresAt };
      const remaining = deps.limits.remaining(projectId, capability, metric) ?? null;
      const answer = { id, projectId, metric, amount, expiresAt: expiresAt.toISOString(), remaining };
      const store = meteringStore(db);
      // Its answer known beforehand, it goes as one statement with its idempotency record.
      return write(hooks, { statement: store.insertReservationSole(reservation), answer }, async () => {
        await store.insertReservation(reservation);
        return answer;
      });
    },

    /**
     * Commits what was used (0 to the amount reserved): recorded with the reservation's id as its record
     * id, on the reservation's day; the rest freed. A reservation past its expiry still records (it
     * happened), and says so; one committed before answers as it did; one released is 409.
     */
    async commit(capability: string, id: string, used: number) {
      await deps.partitionsReady(deps.clock.now());
      const store = meteringStore(db);
      const row = await findIn(store, capability, id);
      if (row.state === 'committed') return { usageRecordId: id, expired: false, committed: row.committed };
      if (row.state === 'released') throw settled('released');
      if (used > row.amount) {
        const detail = `at most the ${row.amount} reserved`;
        throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer: '/amount', detail }] });
      }
      await store.settle(capability, row, 'committed', used);
      // Open, its amount is still in the day's quota: what was used stays there as usage, the rest is
      // this process's to use again. Expired, the amount went back: the usage is counted anew.
      const open = row.state === 'open';
      if (used > 0) {
        const record = { id, projectId: row.project_id, metric: row.metric, value: used, day: row.day };
        await store.ingest(capability, await store.lockGeneration(), [record], open);
      }
      if (open) credit(capability, row, row.amount - used);
      return { usageRecordId: id, expired: !open || row.lapsed, committed: used };
    },

    /** Frees what a reservation holds; again, or once it expired, the same. A committed one is 409. */
    async release(capability: string, id: string) {
      const store = meteringStore(db);
      const row = await findIn(store, capability, id);
      if (row.state === 'committed') throw settled('committed');
      if (row.state === 'open') {
        await store.settle(capability, row, 'released', null);
        credit(capability, row, row.amount);
      }
      return { id, state: row.state === 'open' ? 'released' : row.state };
    },

    /** A project's metric today: its limit, what was used, what open reservations hold, what remains. */
    async limit(capability: string, projectId: string, metric: string) {
      if (!(await deps.projects.existing([projectId])).has(projectId)) throw notFound('project');
      if (!(await metricsOf(capability, [metric])).has(metric)) throw notFound('metric');
      const now = deps.clock.now();
      const limit = await limitOf(projectId, capability, metric);
      const { used, reserved } = await meteringStore(pool).today(projectId, utcDay(now), capability, metric);
      const resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
      return {
        dailyLimit: limit ?? null,
        used,
        reserved,
        remaining: limit === undefined ? null : Math.max(0, limit - used - reserved),
        resetsAt: resetsAt.toISOString(),
      };
    },
  };
};

const settled = (state: 'committed' | 'released') =>
  new PlatformError('RESERVATION_SETTLED', `the reservation was ${state} already`);

/** The reservation by its id (which carries its day), locked; 404 when it is not the capability's. */
async function findIn(
  store: ReturnType<typeof meteringStore>,
  capability: string,
  id: string,
): Promise<ReservationRow> {
  const at = timeOf(id);
  const row = at ? await store.find(capability, utcDay(at), id) : undefined;
  if (!row) throw notFound('reservation');
  return row;
}

export type Metering = ReturnType<typeof meteringService>;
