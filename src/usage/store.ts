import type { Db } from '../db/database.ts';

export interface Increment {
  projectId: string;
  day: string; // YYYY-MM-DD, UTC
  capability: string;
  metric: string;
  count: number;
}

/** One project's allowance of one metric on one UTC day. */
export interface QuotaKey {
  projectId: string;
  day: string;
  capability: string;
  metric: string;
}

export interface LimitRow {
  capability: string;
  metric: string;
  daily_limit: number;
}

/** Where a reader of the usage change feed stands: after this total, as last changed by this transaction. */
export interface UsagePosition {
  xid: string;
  projectId: string;
  day: string;
  capability: string;
  metric: string;
}

/** A day's total as it stands, at its place in the feed. */
export interface UsageChange extends UsagePosition {
  count: number;
}

export const usageStore = (db: Db) => ({
  /**
   * Adds flush number `flush` of a meter, at most once: nothing when the meter's last landed flush is that
   * one or later (a retried flush is a no-op). See migration 0008.
   */
  async add(meterId: string, flush: number, increments: Increment[]) {
    const column = <K extends keyof Increment>(key: K) => increments.map((i) => i[key]);
    await db.query(
      `with flush as (
         insert into usage_meters (meter_id, last_flush, flushed_at) values ($1, $2, now())
         on conflict (meter_id) do update set last_flush = excluded.last_flush, flushed_at = excluded.flushed_at
          where usage_meters.last_flush < excluded.last_flush
         returning 1
       )
       insert into usage_daily (project_id, day, capability, metric, count)
       select i.* from unnest($3::uuid[], $4::date[], $5::text[], $6::text[], $7::bigint[]) as i
        where exists (select 1 from flush)
       on conflict (project_id, day, capability, metric)
       do update set count = usage_daily.count + excluded.count, changed_xid = pg_current_xact_id()`,
      [
        meterId,
        flush,
        column('projectId'),
        column('day'),
        column('capability'),
        column('metric'),
        column('count'),
      ],
    );
  },

  /** Forgets meters that have not flushed since `before` (their processes are long gone); how many went. */
  async forgetMeters(before: Date): Promise<number> {
    const result = await db.query(`delete from usage_meters where flushed_at < $1`, [before]);
    return result.rowCount ?? 0;
  },

  async range(projectId: string, from: string, to: string) {
    const { rows } = await db.query<{ day: string; capability: string; metric: string; count: number }>(
      `select to_char(day, 'YYYY-MM-DD') as day, capability, metric, count
         from usage_daily
        where project_id = $1 and day between $2 and $3
        order by day, capability, metric`,
      [projectId, from, to],
    );
    return rows;
  },

  /**
   * The totals changed after `after` (the feed's position: a transaction id and a total's key), in feed
   * order, up to `limit`; only those whose transaction ended before every one still running began
   * (migration 0028), so nothing can later appear behind a position read.
   */
  async changes(after: UsagePosition | undefined, limit: number): Promise<UsageChange[]> {
    const { rows } = await db.query<UsageChange>(
      `select changed_xid::text as xid, project_id as "projectId", to_char(day, 'YYYY-MM-DD') as day,
              capability, metric, count
         from usage_daily as u
        where changed_xid < pg_snapshot_xmin(pg_current_snapshot())
          and ($1::xid8 is null or (changed_xid, project_id, u.day, capability, metric) > ($1::xid8, $2::uuid, $3::date, $4, $5))
        -- u.day, the column: a bare "day" would be the text the select makes of it, sorted apart from the index
        order by changed_xid, project_id, u.day, capability, metric
        limit $6`,
      [
        after?.xid ?? null,
        after?.projectId ?? null,
        after?.day ?? null,
        after?.capability ?? null,
        after?.metric ?? null,
        limit,
      ],
    );
    return rows;
  },

  async countOn(projectId: string, day: string, capability: string, metric: string) {
    const { rows } = await db.query<{ count: number }>(
      `select count from usage_daily where project_id = $1 and day = $2 and capability = $3 and metric = $4`,
      [projectId, day, capability, metric],
    );
    return rows[0]?.count ?? 0;
  },

  /**
   * Reserves up to `block` more of a day's allowance, never past `limit` (migration 0009): what was granted
   * (0 when the allowance is spent) and how much of the day is reserved now. The first reservation of a
   * day starts from the day's count.
   */
  async reserve(key: QuotaKey, block: number, limit: number): Promise<{ granted: number; reserved: number }> {
    const { rows } = await db.query<{ granted: number; reserved: number }>({
      name: 'usage-quota-reserve',
      text: `insert into usage_quota as q (project_id, day, capability, metric, reserved, last_grant)
             select $1, $2, $3, $4, used + amount, amount
               from (select used, greatest(0, least($5::bigint, $6::bigint - used)) as amount
                       from (select coalesce(max(count), 0) as used from usage_daily
                              where project_id = $1 and day = $2 and capability = $3 and metric = $4) as u) as g
             on conflict (project_id, day, capability, metric) do update
                set reserved = q.reserved + least($5::bigint, $6::bigint - q.reserved),
                    last_grant = least($5::bigint, $6::bigint - q.reserved)
              where q.reserved < $6::bigint
             returning last_grant as granted, reserved`,
      values: [key.projectId, key.day, key.capability, key.metric, block, limit],
    });
    return rows[0] ?? { granted: 0, reserved: limit };
  },

  /** Hands back reserved allowance a process did not use. */
  /** Hands unused allowances back to their days, in one statement (one row per key). */
  async giveBack(returns: { key: QuotaKey; unused: number }[]) {
    if (returns.length === 0) return;
    const column = <T>(pick: (r: (typeof returns)[number]) => T) => returns.map(pick);
    await db.query(
      `update usage_quota q set reserved = greatest(0, q.reserved - r.unused)
         from unnest($1::uuid[], $2::date[], $3::text[], $4::text[], $5::bigint[])
              as r(project_id, day, capability, metric, unused)
        where q.project_id = r.project_id and q.day = r.day and q.capability = r.capability and q.metric = r.metric`,
      [
        column((r) => r.key.projectId),
        column((r) => r.key.day),
        column((r) => r.key.capability),
        column((r) => r.key.metric),
        column((r) => r.unused),
      ],
    );
  },

  /** Forgets the reservations of days before `day` (they bind nothing any more); how many went. */
  async forgetQuotaBefore(day: string): Promise<number> {
    const result = await db.query(`delete from usage_quota where day < $1`, [day]);
    return result.rowCount ?? 0;
  },

  /** The overrides of these projects, in one round trip (the limits cache's misses and refreshes). */
  async limits(projectIds: string[]) {
    const { rows } = await db.query<LimitRow & { project_id: string }>({
      name: 'usage-limits-of-projects',
      text: `select project_id, capability, metric, daily_limit from usage_limits where project_id = any ($1::uuid[])`,
      values: [projectIds],
    });
    return rows;
  },

  /** Removes a project's override; whether there was one. */
  async clearLimit(projectId: string, capability: string, metric: string): Promise<boolean> {
    const result = await db.query(
      `delete from usage_limits where project_id = $1 and capability = $2 and metric = $3`,
      [projectId, capability, metric],
    );
    return (result.rowCount ?? 0) > 0;
  },

  async setLimit(projectId: string, capability: string, metric: string, dailyLimit: number) {
    await db.query(
      `insert into usage_limits (project_id, capability, metric, daily_limit) values ($1, $2, $3, $4)
       on conflict (project_id, capability, metric) do update set daily_limit = excluded.daily_limit`,
      [projectId, capability, metric, dailyLimit],
    );
  },
});
