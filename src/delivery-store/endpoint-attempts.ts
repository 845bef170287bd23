// An endpoint's attempts as its pages show them: the last day's success rate of each of a project's
// endpoints, and one endpoint's attempts by hour (the portal's chart), read from the history's partitions
// of the window only.

import type { Db } from '../db/database.ts';
import { DAY_MS } from '../lib/clock.ts';

const HOUR_MS = 60 * 60 * 1000;

export const endpointAttempts = (db: Db) => ({
  /**
   * Each endpoint's attempts in the last 24 hours and how many succeeded, read from the deliveries of the
   * day's events (the partitions of that day only): the portal's success rate, read when its list is.
   */
  async ofDay(projectId: string) {
    // The day's bounds go in as values, not as now() - interval: PostgreSQL then prunes the partitions
    // (days, and the days made ahead) while planning, instead of planning the join over every one of them
    // and pruning as it runs, which cost every list more than its reads (docs/decisions/measured-choices.md). The upper bound leaves an hour for clocks that run ahead.
    const now = Date.now();
    const since = new Date(now - DAY_MS);
    const until = new Date(now + HOUR_MS);
    const { rows } = await db.query<{ endpoint_id: string; attempts: number; succeeded: number }>({
      name: 'endpoint-attempts-of-day',
      text: `select d.endpoint_id, count(*)::int as attempts, count(*) filter (where a.succeeded)::int as succeeded
         from deliveries d
         join delivery_attempts a
           on a.project_id = d.project_id and a.delivery_id = d.id and a.event_created_at = d.event_created_at
        where d.project_id = $1 and d.event_created_at >= $2 and d.event_created_at < $3
          and a.event_created_at >= $2 and a.event_created_at < $3 and a.started_at >= $2
        group by d.endpoint_id`,
      values: [projectId, since, until],
    });
    return new Map(
      rows.map((row) => [row.endpoint_id, { attempts: row.attempts, succeeded: row.succeeded }]),
    );
  },

  /**
   * An endpoint's attempts in each of the last 24 hours (the current one last), succeeded and failed, read
   * as ofDay reads them: from the deliveries of the window's events, its partitions only.
   */
  async byHour(projectId: string, id: string) {
    const current = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
    const since = new Date(current - 23 * HOUR_MS);
    const until = new Date(current + 2 * HOUR_MS); // the current hour, and an hour for clocks ahead
    const { rows } = await db.query<{ hour: string; succeeded: number; failed: number }>({
      name: 'endpoint-attempts-by-hour',
      text: `with counted as (
         select date_trunc('hour', a.started_at) as hour,
                count(*) filter (where a.succeeded)::int as succeeded,
                count(*) filter (where not a.succeeded)::int as failed
           from deliveries d
           join delivery_attempts a
             on a.project_id = d.project_id and a.delivery_id = d.id and a.event_created_at = d.event_created_at
          where d.project_id = $1 and d.endpoint_id = $2 and d.event_created_at >= $3 and d.event_created_at < $4
            and a.event_created_at >= $3 and a.event_created_at < $4 and a.started_at >= $3
          group by 1
       )
       select to_char(h.hour at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as hour,
              coalesce(c.succeeded, 0) as succeeded, coalesce(c.failed, 0) as failed
         from generate_series($3::timestamptz, $3::timestamptz + interval '23 hours', interval '1 hour') as h(hour)
         left join counted c on c.hour = h.hour
        order by h.hour`,
      values: [projectId, id, since, until],
    });
    return rows;
  },
});
