import type { Db } from '../db/database.ts';

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
  url: string | null;
  active_secret: Buffer | null;
  previous_secret: Buffer | null;
}

export interface Completion {
  projectId: string;
  id: string;
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
   * the send needs (event, endpoint address, sealed secrets) joined in.
   */
  async claim(limit: number, leaseSeconds: number, leaseToken: string, saturatedEndpoints: string[]) {
    const { rows } = await db.query<ClaimedDelivery>({
      name: 'delivery-claim',
      text: `with due as (
         select project_id, id from deliveries
          where state = 'pending' and next_attempt_at <= now()
            and (lease_until is null or lease_until < now())
            and endpoint_id <> all ($4::uuid[])
          order by next_attempt_at
          limit $1
          for update skip locked
       ), claimed as (
         update deliveries d
            set lease_until = now() + make_interval(secs => $2), lease_token = $3
           from due
          where d.project_id = due.project_id and d.id = due.id
         returning d.project_id, d.id, d.event_id, d.endpoint_id, d.attempts
       )
       select c.*, e.type, e.data::text as data, e.created_at as event_created_at, w.url, w.active_secret, w.previous_secret
         from claimed c
         join events e on e.project_id = c.project_id and e.id = c.event_id
         left join webhook_endpoints w on w.project_id = c.project_id and w.id = c.endpoint_id`,
      values: [limit, leaseSeconds, leaseToken, saturatedEndpoints],
    });
    return rows;
  },

  /**
   * Records a batch of attempts in one statement: each delivery's next state (only while this worker still
   * holds its lease), and one attempt row each.
   */
  async complete(batch: Completion[]) {
    if (batch.length === 0) return;
    const column = <K extends keyof Completion>(key: K) => batch.map((c) => c[key]);
    await db.query({
      name: 'delivery-complete',
      text: `with r as (
         select * from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::float8[], $6::timestamptz[],
                              $7::int[], $8::int[], $9::text[], $10::bool[], $11::text[])
           as r(project_id, id, lease_token, state, retry_in, started_at, duration_ms, status_code, error,
                succeeded, response_body)
       ), updated as (
         update deliveries d
            set state = r.state,
                attempts = d.attempts + 1,
                next_attempt_at = case when r.state = 'pending'
                                       then now() + make_interval(secs => r.retry_in) else d.next_attempt_at end,
                lease_until = null, lease_token = null,
                last_status = r.status_code, last_error = r.error,
                delivered_at = case when r.state = 'delivered' then now() end,
                dead_at = case when r.state = 'dead' then now() end
           from r
          where d.project_id = r.project_id and d.id = r.id and d.lease_token = r.lease_token
         returning d.project_id, d.id, d.attempts, r.started_at, r.duration_ms, r.status_code, r.error,
                   r.succeeded, r.response_body
       )
       insert into delivery_attempts
              (project_id, delivery_id, attempt, started_at, duration_ms, status_code, error, succeeded, response_body)
       select project_id, id, attempts, started_at, duration_ms, status_code, error, succeeded, response_body
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
      ],
    });
  },

  /** Pending deliveries that cannot be sent (their endpoint is gone) are cancelled. */
  async cancel(projectId: string, ids: string[]) {
    await db.query(
      `update deliveries set state = 'cancelled', lease_until = null, lease_token = null
        where project_id = $1 and id = any ($2::uuid[]) and state = 'pending'`,
      [projectId, ids],
    );
  },

  /** Hands a claimed delivery back (a stopping worker that never started it). */
  async release(projectId: string, id: string) {
    await db.query(
      `update deliveries set lease_until = null, lease_token = null
        where project_id = $1 and id = $2 and state = 'pending'`,
      [projectId, id],
    );
  },

  /** The receiver answered 410 Gone: the endpoint is disabled and its other pending deliveries cancelled. */
  async disableEndpoint(projectId: string, endpointId: string) {
    await db.query(`update webhook_endpoints set active = false where project_id = $1 and id = $2`, [
      projectId,
      endpointId,
    ]);
    await db.query(
      `update deliveries set state = 'cancelled', last_error = 'endpoint disabled after 410 Gone'
        where project_id = $1 and endpoint_id = $2 and state = 'pending' and lease_token is null`,
      [projectId, endpointId],
    );
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
