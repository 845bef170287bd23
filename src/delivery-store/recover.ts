// Recovery: a dead (or waiting) delivery sent again now, and an endpoint's failed history re-sent in bulk
// by a background job (jobs.ts), with a dry run that only counts.
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { notFound, PlatformError } from '../lib/errors.ts';
import { timeOf } from '../lib/ids.ts';
import { DELIVERIES_CHANNEL } from './channel.ts';
import { laneOf, lockLanes, settleLanes } from './lanes.ts';
import { projectHorizon } from './retention.ts';
import { stateOf } from './state.ts';

/** The most events one recovery job re-sends. */
export const MAX_RECOVERY = 100_000;

export interface RecoverInput {
  states: ('dead' | 'delivered' | 'cancelled')[];
  eventTypes?: string[];
  since: string;
  until?: string;
  dryRun?: boolean;
}

/** The oldest time the project's ($1) history still holds ($3: the installation's retention). */
const HORIZON = projectHorizon('$1', '$3');

export const recovery = (db: Db, retentionDays: number) => ({
  /**
   * A dead delivery goes back in the queue, due now, for one more attempt (an ordered endpoint takes it at
   * the back of its lane); a pending one is made due now. 202 either way; any other state is a 400.
   */
  async retry(projectId: string, deliveryId: string) {
    const at = timeOf(deliveryId);
    const { rows } = await db.query<{ state: string; endpoint_id: string; found: boolean; active: boolean }>(
      `select ${stateOf('d')} as state, d.endpoint_id, w.id is not null as found, coalesce(w.active, false) as active
         from deliveries d
         left join webhook_endpoints w on w.project_id = d.project_id and w.id = d.endpoint_id
        where d.project_id = $1 and d.id = $2 and d.event_created_at >= ${HORIZON}
          ${at ? 'and d.event_created_at = $4' : ''}`,
      [projectId, deliveryId, retentionDays, ...(at ? [at] : [])],
    );
    const delivery = rows[0];
    if (!delivery) throw notFound('delivery');
    if (delivery.state !== 'dead' && delivery.state !== 'pending') {
      throw new PlatformError('DELIVERY_NOT_RETRYABLE', `the delivery is ${delivery.state}`);
    }
    if (!delivery.found) throw new PlatformError('DELIVERY_NOT_RETRYABLE', 'its endpoint was deleted');
    if (!delivery.active) throw endpointDisabled();
    await lockLanes(db, [delivery.endpoint_id]);
    const { rows: retried } = await db.query<{ lane: string | null }>(
      `with target as (
         -- its state derived (delivery-store/state.ts): a delivered one, though it says pending, is neither
         -- made due nor revived below
         select d.project_id, d.id, d.event_id, d.event_created_at, d.endpoint_id, d.attempts, l.lane,
                ${stateOf('d')} as state
           from deliveries d
           join webhook_endpoints w on w.project_id = d.project_id and w.id = d.endpoint_id
           join events e on e.project_id = d.project_id and e.id = d.event_id and e.created_at = d.event_created_at
          cross join lateral (select ${laneOf('e.ordering_key')} as lane) l
          where d.project_id = $1 and d.id = $2 and d.state in ('dead', 'pending')
            for update of d
       ), due_now as (
         update delivery_queue q set next_attempt_at = now(), throttled = false
           from target t
          where t.state = 'pending' and q.delivery_id = t.id
         returning q.lane
       ), revived as (
         insert into delivery_queue (delivery_id, project_id, event_id, event_created_at, endpoint_id, attempts, lane, held)
         select id, project_id, event_id, event_created_at, endpoint_id, attempts, lane, case when lane is not null then 'ordered' end
           from target where state = 'dead'
         returning lane
       ), revived_history as (
         update deliveries d set state = 'pending', dead_at = null
           from target t
          where t.state = 'dead' and d.project_id = t.project_id and d.id = t.id and d.event_created_at = t.event_created_at
       )
       select lane, pg_notify('${DELIVERIES_CHANNEL}', '') from (select lane from due_now union all select lane from revived) r`,
      [projectId, deliveryId],
    );
    const lane = retried[0]?.lane;
    if (lane !== null && lane !== undefined) await settleLanes(db, projectId, [[delivery.endpoint_id, lane]]);
    return { deliveryId };
  },

  /**
   * The events whose latest delivery to the endpoint is in one of `states`, of the types asked for (exact
   * or patterns), in the window [since, until) of the events' time: counted (a dry run), or handed to a
   * new job that re-sends each once (kind replay). More than MAX_RECOVERY is refused.
   */
  async recover(projectId: string, endpointId: string, input: RecoverInput) {
    const { rows: endpoints } = await db.query<{ active: boolean }>(
      `select active from webhook_endpoints where project_id = $1 and id = $2`,
      [projectId, endpointId],
    );
    const endpoint = endpoints[0];
    if (!endpoint) throw notFound('webhook endpoint');
    const until = input.until ?? new Date().toISOString();
    if (Date.parse(input.since) >= Date.parse(until)) {
      const detail = 'since must be before until';
      throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer: '/since', detail }] });
    }
    const matched = `with latest as (
         select distinct on (d.event_id) d.event_id, d.event_created_at, ${stateOf('d')} as state
           from deliveries d
          where d.project_id = $1 and d.endpoint_id = $2
            and d.event_created_at >= greatest($4::timestamptz, ${HORIZON}) and d.event_created_at < $5
          order by d.event_id, d.created_at desc, d.id desc
       ), matched as (
         select l.event_id, l.event_created_at
           from latest l
           join events e on e.project_id = $1 and e.id = l.event_id and e.created_at = l.event_created_at
          where l.state = any ($6::text[]) and ($7::text[] is null or subscribes($7, e.type))
       )`;
    const values = [
      projectId,
      endpointId,
      retentionDays,
      input.since,
      until,
      input.states,
      input.eventTypes ?? null,
    ];
    if (input.dryRun) {
      const { rows } = await db.query<{ matched: number }>(
        `${matched} select count(*)::int as matched from matched`,
        values,
      );
      return { matched: tooMany(rows[0]?.matched ?? 0) };
    }
    if (!endpoint.active) throw endpointDisabled();
    const jobId = randomUUID();
    const { rows } = await db.query<{ matched: number }>(
      `${matched}, job as (
         insert into jobs (project_id, id, kind, params, total)
         select $1, $8, 'recover', $9, count(*) from matched
       ), items as (
         insert into job_events (project_id, job_id, n, event_id, event_created_at)
         select $1, $8, row_number() over (order by event_created_at, event_id), event_id, event_created_at
           from matched
       )
       select count(*)::int as matched, pg_notify('${DELIVERIES_CHANNEL}', '') from matched`,
      [...values, jobId, JSON.stringify({ endpointId, ...input, until })],
    );
    return { jobId, matched: tooMany(rows[0]?.matched ?? 0) };
  },
});

function tooMany(matched: number) {
  if (matched <= MAX_RECOVERY) return matched;
  const detail = `${matched} events match; a recovery re-sends at most ${MAX_RECOVERY}: narrow the window or the types`;
  throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer: '/since', detail }] });
}

const endpointDisabled = () =>
  new PlatformError(
    'WEBHOOK_ENDPOINT_DISABLED',
    'the endpoint is disabled: re-enable it first (PATCH with active: true)',
  );
