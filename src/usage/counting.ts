// The day totals (usage_daily) and allowances (usage_quota) as parts of another room's statement: a
// capability's records counted in the statement that stores them, and reservations that lapse giving their
// allowance back in the statement that expires them (plane/metering/store.ts). The usage room keeps every
// statement of its tables (store.ts and these), checked by lint.

/**
 * A CTE, `counted`: `totals` (a CTE of project_id, day, metric, value) added to `capability`'s day totals,
 * each total taking this transaction's place in the change feed (migration 0028).
 */
export const addToTotals = (totals: string, capability: string) => `counted as (
    insert into usage_daily (project_id, day, capability, metric, count)
    select project_id, day, ${capability}, metric, value from ${totals} order by project_id, day, metric
    on conflict (project_id, day, capability, metric)
    do update set count = usage_daily.count + excluded.count, changed_xid = pg_current_xact_id()
  )`;

/**
 * A CTE, `quota`: usage recorded without a reservation takes its part of each day's allowance already
 * handed out (usage/limits.ts), unless `reserved` (SQL: a reservation took it before). Rows are locked in
 * key order, so two batches never wait on each other.
 */
export const takeFromAllowance = (totals: string, capability: string, reserved: string) => `quota as (
    update usage_quota q set reserved = q.reserved + t.value
      from ${totals} t, (select project_id, day, metric from usage_quota
                         where capability = ${capability} and (project_id, day, metric) in (select project_id, day, metric from ${totals})
                         order by project_id, day, metric for update) as locked
     where q.project_id = t.project_id and q.day = t.day and q.capability = ${capability} and q.metric = t.metric
       and (locked.project_id, locked.day, locked.metric) = (t.project_id, t.day, t.metric)
       and not ${reserved}
  )`;

/**
 * A CTE, `freed`: the amounts of `lapsed` (a CTE of project_id, day, capability, metric, amount) given back
 * to their days' allowances.
 */
export const giveBackToAllowance = (lapsed: string) => `freed as (
    update usage_quota q set reserved = greatest(0, q.reserved - t.amount)
      from (select project_id, day, capability, metric, sum(amount) as amount from ${lapsed} group by 1, 2, 3, 4) t
     where q.project_id = t.project_id and q.day = t.day and q.capability = t.capability and q.metric = t.metric
  )`;

/** SQL: a day's total of a metric of a project, 0 before any usage (each argument an SQL expression). */
export const totalOf = (project: string, day: string, capability: string, metric: string) =>
  `(select coalesce(max(count), 0) from usage_daily
     where project_id = ${project} and day = ${day} and capability = ${capability} and metric = ${metric})`;
