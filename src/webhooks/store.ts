import type { Db } from '../db/database.ts';
import { DELIVERIES_CHANNEL } from '../events/store.ts';

export const ENDPOINTS_PER_PROJECT = 20;

export interface EndpointRow {
  id: string;
  url: string;
  event_types: string[];
  active: boolean;
  has_previous_secret: boolean;
  created_at: Date;
}

const RECORD = `id, url, event_types, active, previous_secret is not null as has_previous_secret, created_at`;

export const endpointStore = (db: Db) => ({
  /**
   * Inserts the endpoint unless the project already has 20, in one statement: taking a slot is a
   * conditional update of the project's count, re-checked on the latest row when creates queue on it.
   */
  async insertWithinLimit(
    projectId: string,
    endpoint: { id: string; url: string; eventTypes: string[]; sealedSecret: Buffer },
  ) {
    const { rows } = await db.query<EndpointRow>({
      name: 'webhook-endpoint-insert',
      text: `with slot as (
               update projects set webhook_endpoints = webhook_endpoints + 1
                where id = $1 and webhook_endpoints < $6
               returning id
             )
             insert into webhook_endpoints (project_id, id, url, event_types, active_secret)
             select slot.id, $2, $3, $4, $5 from slot
             returning ${RECORD}`,
      values: [
        projectId,
        endpoint.id,
        endpoint.url,
        endpoint.eventTypes,
        endpoint.sealedSecret,
        ENDPOINTS_PER_PROJECT,
      ],
    });
    return rows[0];
  },

  async list(projectId: string) {
    const { rows } = await db.query<EndpointRow>(
      `select ${RECORD} from webhook_endpoints where project_id = $1 order by created_at, id`,
      [projectId],
    );
    return rows;
  },

  /** Deletes the endpoint and its secrets, and gives its slot back to the project's count. */
  async delete(projectId: string, id: string) {
    const { rows } = await db.query<{ deleted: boolean }>(
      `with gone as (
         delete from webhook_endpoints where project_id = $1 and id = $2 returning id
       ), counted as (
         update projects set webhook_endpoints = webhook_endpoints - 1
          where id = $1 and exists (select 1 from gone)
       )
       select exists (select 1 from gone) as deleted`,
      [projectId, id],
    );
    return rows[0]?.deleted === true;
  },

  /** The new secret becomes active; the active one becomes the previous one (an older previous is dropped). */
  async rotate(projectId: string, id: string, sealedSecret: Buffer) {
    const { rows } = await db.query<EndpointRow>(
      `update webhook_endpoints
          set previous_secret = active_secret, active_secret = $3
        where project_id = $1 and id = $2
       returning ${RECORD}`,
      [projectId, id, sealedSecret],
    );
    return rows[0];
  },

  /** Drops the previous secret; the endpoint, and whether there was one to retire. */
  async retirePrevious(projectId: string, id: string) {
    const { rows } = await db.query<EndpointRow & { retired: boolean }>(
      `update webhook_endpoints set previous_secret = null
         from (select previous_secret is not null as retired from webhook_endpoints
                where project_id = $1 and id = $2 for update) as before
        where project_id = $1 and id = $2
       returning ${RECORD}, before.retired`,
      [projectId, id],
    );
    return rows[0];
  },
});

/**
 * Cancels an endpoint's pending deliveries, held by a worker or not, and tells every worker to drop the
 * ones it holds (NOTIFY with the endpoint's id, sent at commit). The lease token stays, so that an attempt
 * in flight is still recorded when it ends (deliveryStore.complete). The one way an endpoint's deliveries are
 * cancelled: on deletion and when a 410 disables it.
 */
export async function cancelPending(
  db: Db,
  projectId: string,
  endpointId: string,
  reason: string,
  except: string | null = null,
) {
  await db.query(
    `with cancelled as (
       update deliveries set state = 'cancelled', lease_until = null, last_error = $3
        where project_id = $1 and endpoint_id = $2 and state = 'pending' and id is distinct from $4
       returning 1
     )
     select pg_notify('${DELIVERIES_CHANNEL}', $2::text) from (select 1 from cancelled limit 1) as any_cancelled`,
    [projectId, endpointId, reason, except],
  );
}
