// The SQL of metering (migration 0018): usage records counted exactly once, and reservations against a
// day's limit. A reservation's allowance is taken as Core's own daily limits take theirs (usage/limits.ts);
// the day totals and allowances themselves are the usage room's, written here through its fragments
// (usage/counting.ts).
import type { Db, SoleWrite } from '../../db/database.ts';
import { addToTotals, giveBackToAllowance, takeFromAllowance, totalOf } from '../../usage/counting.ts';
import { GENERATION_DAYS } from './partitions.ts';

/** The first key of the advisory locks of the record generations (the second is the generation). */
const GENERATION_LOCK = 7310018;

export interface UsageRecord {
  id: string;
  projectId: string;
  /** bare: messages_sent */
  metric: string;
  value: number;
  /** the UTC day it counts on, YYYY-MM-DD */
  day: string;
}

export interface ReservationRow {
  day: string;
  id: string;
  project_id: string;
  metric: string;
  amount: number;
  expires_at: Date;
  state: 'open' | 'committed' | 'released' | 'expired';
  committed: number | null;
  /** open, but past its expiry (not swept yet) */
  lapsed: boolean;
}

export interface NewReservation {
  capability: string;
  id: string;
  projectId: string;
  metric: string;
  day: string;
  amount: number;
  expiresAt: Date;
}

const INSERT_RESERVATION = `insert into usage_reservations (day, capability, id, project_id, metric, amount, expires_at)
  values ($1, $2, $3, $4, $5, $6, $7)`;
const reservationValues = (r: NewReservation) => [
  r.day,
  r.capability,
  r.id,
  r.projectId,
  r.metric,
  r.amount,
  r.expiresAt,
];

export const meteringStore = (db: Db) => ({
  /**
   * Takes the lock of the current generation of record ids (shared: ingestions run side by side), and in
   * a generation's first minute the previous one's too, exclusively: a new generation's first records
   * wait until every ingestion of the previous one has committed, so that its check of the previous
   * generation sees them all (an ingestion lasts at most its statement timeout, 20 s). The generation.
   */
  async lockGeneration(): Promise<number> {
    const { rows } = await db.query<{ generation: number }>({
      name: 'usage-records-generation',
      text: `with g as (select floor(extract(epoch from now()) / 86400 / ${GENERATION_DAYS})::int as generation)
             select generation, set_config('statement_timeout', '20s', true),
                    pg_advisory_xact_lock_shared(${GENERATION_LOCK}, generation),
                    case when now() < to_timestamp(generation::bigint * 86400 * ${GENERATION_DAYS}) + interval '60 seconds'
                         then pg_advisory_xact_lock(${GENERATION_LOCK}, generation - 1) end
               from g`,
    });
    return rows[0]?.generation as number;
  },

  /**
   * Records what is new among the records (by id: not in this generation nor the previous one; in a batch
   * the first of an id wins) and counts it, in one statement: the day's usage, and the day's quota where a
   * limit made one (unless `reserved`: a reservation's usage, in the quota already). Within
   * lockGeneration's transaction. Batches running at once update the same counters: each locks them in
   * one order (by project, day and metric), so that two never wait on each other in a circle. How many
   * were new.
   */
  async ingest(
    capability: string,
    generation: number,
    records: UsageRecord[],
    reserved = false,
  ): Promise<number> {
    const column = <K extends keyof UsageRecord>(key: K) => records.map((r) => r[key]);
    const { rows } = await db.query<{ accepted: number }>({
      name: 'usage-records-ingest',
      text: `with r as (
               select * from unnest($3::text[], $4::uuid[], $5::text[], $6::bigint[], $7::date[])
                 with ordinality as r(id, project_id, metric, value, day, n)
             ), known as (
               select id from usage_records where generation = $2 - 1 and capability = $1 and id = any($3::text[])
             ), firsts as (
               select distinct on (id) * from r where id not in (select id from known) order by id, n
             ), inserted as (
               insert into usage_records (generation, capability, id, project_id, metric, value, day)
               select $2, $1, id, project_id, metric, value, day from firsts
               on conflict (generation, capability, id) do nothing
               returning project_id, metric, value, day
             ), totals as (
               select project_id, day, metric, sum(value)::bigint as value from inserted group by 1, 2, 3
             ), ${addToTotals('totals', '$1')}, ${takeFromAllowance('totals', '$1', '$8')}
             select count(*)::int as accepted from inserted`,
      values: [
        capability,
        generation,
        column('id'),
        column('projectId'),
        column('metric'),
        column('value'),
        column('day'),
        reserved,
      ],
    });
    return rows[0]?.accepted ?? 0;
  },

  /** A reservation, its allowance already taken (usage/limits.ts). */
  async insertReservation(r: NewReservation) {
    await db.query({
      name: 'usage-reservation-insert',
      text: INSERT_RESERVATION,
      values: reservationValues(r),
    });
  },

  /** The same insert as a sole write: it only inserts, so it may commit with others. */
  insertReservationSole: (r: NewReservation): SoleWrite => ({
    name: 'usage-reservation-insert-sole',
    together: {},
    ctes: `made as (${INSERT_RESERVATION} returning id)`,
    check: 'exists (select from made)',
    values: reservationValues(r),
  }),

  /**
   * Expires a project's reservations of a metric on a day that are past their time, giving their amount
   * back to the day's quota; how many.
   */
  async expire(projectId: string, day: string, capability: string, metric: string): Promise<number> {
    const { rows } = await db.query<{ expired: number }>(
      `with expired as (
         update usage_reservations set state = 'expired'
          where day = $2 and capability = $3 and project_id = $1 and metric = $4 and state = 'open'
            and expires_at <= now()
         returning project_id, day, capability, metric, amount
       ), ${giveBackToAllowance('expired')}
       select count(*)::int as expired from expired`,
      [projectId, day, capability, metric],
    );
    return rows[0]?.expired ?? 0;
  },

  /** Expires, at most 1,000 at a time, every reservation past its time; how many. */
  async expireAll(): Promise<number> {
    const { rows } = await db.query<{ expired: number }>(
      `with due as (
         select day, capability, id from usage_reservations
          where state = 'open' and expires_at <= now() order by expires_at limit 1000 for update skip locked
       ), expired as (
         update usage_reservations r set state = 'expired'
           from due where r.day = due.day and r.capability = due.capability and r.id = due.id
         returning r.project_id, r.day, r.capability, r.metric, r.amount
       ), ${giveBackToAllowance('expired')}
       select count(*)::int as expired from expired`,
    );
    return rows[0]?.expired ?? 0;
  },

  /** A reservation, locked for its settling (in the caller's transaction). */
  async find(capability: string, day: string, id: string): Promise<ReservationRow | undefined> {
    const { rows } = await db.query<ReservationRow>(
      `select to_char(day, 'YYYY-MM-DD') as day, id, project_id, metric, amount, expires_at, state, committed,
              state = 'open' and expires_at <= now() as lapsed
         from usage_reservations where day = $1 and capability = $2 and id = $3 for update`,
      [day, capability, id],
    );
    return rows[0];
  },

  /** Marks a reservation committed (with what was used) or released. */
  async settle(
    capability: string,
    row: ReservationRow,
    state: 'committed' | 'released',
    used: number | null,
  ) {
    await db.query(
      `update usage_reservations set state = $4, committed = $5 where day = $1 and capability = $2 and id = $3`,
      [row.day, capability, row.id, state, used],
    );
  },

  /** Today's figures of a project's metric: what was used, and what open reservations hold. */
  async today(projectId: string, day: string, capability: string, metric: string) {
    const { rows } = await db.query<{ used: number; reserved: number }>(
      `select ${totalOf('$1', '$2', '$3', '$4')}::bigint as used,
              (select coalesce(sum(amount), 0) from usage_reservations
                where day = $2 and capability = $3 and project_id = $1 and metric = $4 and state = 'open'
                  and expires_at > now())::bigint as reserved`,
      [projectId, day, capability, metric],
    );
    return rows[0] ?? { used: 0, reserved: 0 };
  },
});
