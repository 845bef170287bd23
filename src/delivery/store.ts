import type { Db } from '../db/database.ts';
import { cancelPending } from '../webhooks/store.ts';

export interface ClaimedDelivery {
  project_id: string;
  id: string;
  event_id: string;
  endpoint_id: string;
  /** attempts made before this one */
  attempts: number;
  type: string;
  /** the payload as JSON text, spliced into the body as is (no parse and re-serialise per delivery) */
  data: string;
  event_created_at: Date;
  url: string;
  active_secret: Buffer;
  previous_secret: Buffer | null;
}

export interface Completion {
  projectId: string;
  id: string;
  /** the partition the delivery lives in */
  eventCreatedAt: Date;
  leaseToken: string;
  state: 'pending' | 'delivered' | 'dead';
  /** seconds until the next attempt, when state is pending */
  retryIn: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  succeeded: boolean;
  responseBody: string | null;
}

export const deliveryStore = (db: Db) => ({
  /**
   * Claims up to `limit` due deliveries in one statement: due order, `skip locked` so workers never wait on
   * each other, a lease (an expired lease is due again: a crashed worker loses nothing), and everything
   * the send needs (event, endpoint address, sealed secrets) joined in. A due delivery whose endpoint is
   * gone or disabled is cancelled here instead (one queued while its endpoint was being deleted, say).
   */
  async claim(limit: number, leaseSeconds: number, leaseToken: string, saturatedEndpoints: string[]) {
    const { rows } = await db.query<ClaimedDelivery>({
      name: 'delivery-claim',
      text: `with due as (
         select d.project_id, d.id, d.event_created_at, w.active as sendable,
                case when w.id is null then 'endpoint deleted' else 'endpoint disabled' end as unsendable
           from deliveries d
           left join webhook_endpoints w on w.project_id = d.project_id and w.id = d.endpoint_id
          where d.state = 'pending' and d.next_attempt_at <= now()
            and (d.lease_until is null or d.lease_until < now())
            and d.endpoint_id <> all ($4::uuid[])
          order by d.next_attempt_at
          limit $1
          for update of d skip locked
       ), dropped as (
         update deliveries d set state = 'cancelled', lease_until = null, lease_token = null,
                last_error = due.unsendable
           from due
          where d.project_id = due.project_id and d.id = due.id and d.event_created_at = due.event_created_at
            and due.sendable is not true
       ), claimed as (
         update deliveries d
            set lease_until = now() + make_interval(secs => $2), lease_token = $3
           from due
          where d.project_id = due.project_id and d.id = due.id and d.event_created_at = due.event_created_at
            and due.sendable
         returning d.project_id, d.id, d.event_id, d.event_created_at, d.endpoint_id, d.attempts
       )
       select c.*, e.type, e.data::text as data, w.url, w.active_secret, w.previous_secret
         from claimed c
         join events e on e.project_id = c.project_id and e.id = c.event_id and e.created_at = c.event_created_at
         join webhook_endpoints w on w.project_id = c.project_id and w.id = c.endpoint_id`,
      values: [limit, leaseSeconds, leaseToken, saturatedEndpoints],
    });
    return rows;
  },

  /**
   * Records a batch of attempts in one statement: each delivery's next state (only while this worker still
   * holds its lease), and one attempt row each. A delivery cancelled while its attempt was in flight keeps
   * its state and reason (cancelPending leaves the lease token for this), and the attempt is recorded.
   */
  async complete(batch: Completion[]) {
    if (batch.length === 0) return;
    const column = <K extends keyof Completion>(key: K) => batch.map((c) => c[key]);
    await db.query({
      name: 'delivery-complete',
      text: `with r as (
         select * from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::float8[], $6::timestamptz[],
                              $7::int[], $8::int[], $9::text[], $10::bool[], $11::text[], $12::timestamptz[])
           as r(project_id, id, lease_token, state, retry_in, started_at, duration_ms, status_code, error,
                succeeded, response_body, event_created_at)
       ), updated as (
         update deliveries d
            set state = case when d.state = 'pending' then r.state else d.state end,
                attempts = d.attempts + 1,
                next_attempt_at = case when d.state = 'pending' and r.state = 'pending'
                                       then now() + make_interval(secs => r.retry_in) else d.next_attempt_at end,
                lease_until = null, lease_token = null,
                last_status = r.status_code,
                last_error = case when d.state = 'pending' then r.error else d.last_error end,
                delivered_at = case when d.state = 'pending' and r.state = 'delivered' then now() end,
                dead_at = case when d.state = 'pending' and r.state = 'dead' then now() end
           from r
          where d.project_id = r.project_id and d.id = r.id and d.event_created_at = r.event_created_at
            and d.lease_token = r.lease_token
         returning d.project_id, d.id, d.event_created_at, d.attempts, r.started_at, r.duration_ms, r.status_code,
                   r.error, r.succeeded, r.response_body
       )
       insert into delivery_attempts (project_id, delivery_id, event_created_at, attempt, started_at, duration_ms,
                                      status_code, error, succeeded, response_body)
       select project_id, id, event_created_at, attempts, started_at, duration_ms, status_code, error, succeeded,
              response_body
         from updated`,
      values: [
        column('projectId'),
        column('id'),
        column('leaseToken'),
        column('state'),
        column('retryIn'),
        column('startedAt'),
        column('durationMs'),
        column('statusCode'),
        column('error'),
        column('succeeded'),
        column('responseBody'),
        column('eventCreatedAt'),
      ],
    });
  },

  /** Hands a claimed delivery back (a stopping worker that never started it). */
  async release(delivery: { project_id: string; id: string; event_created_at: Date }) {
    await db.query(
      `update deliveries set lease_until = null, lease_token = null
        where project_id = $1 and id = $2 and event_created_at = $3 and state = 'pending'`,
      [delivery.project_id, delivery.id, delivery.event_created_at],
    );
  },

  /**
   * The receiver answered 410 Gone to a delivery: the endpoint is disabled, and its other pending
   * deliveries cancelled (that one dies with its attempt).
   */
  async disableEndpoint(projectId: string, endpointId: string, goneDeliveryId: string) {
    await db.query(`update webhook_endpoints set active = false where project_id = $1 and id = $2`, [
      projectId,
      endpointId,
    ]);
    await cancelPending(db, projectId, endpointId, 'endpoint disabled after 410 Gone', goneDeliveryId);
  },

  async heartbeat(worker: { id: string; host: string; pid: number; startedAt: Date }) {
    await db.query(
      `insert into worker_heartbeats (worker_id, host, pid, started_at, seen_at) values ($1, $2, $3, $4, now())
       on conflict (worker_id) do update set seen_at = now()`,
      [worker.id, worker.host, worker.pid, worker.startedAt],
    );
  },

  async forgetWorker(workerId: string) {
    await db.query(`delete from worker_heartbeats where worker_id = $1`, [workerId]);
  },
});
