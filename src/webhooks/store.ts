import type { Db, SoleWrite } from '../db/database.ts';
import { DELIVERIES_CHANNEL } from '../delivery-store/channel.ts';
import { resetDeadStreak, resetRateState } from '../delivery-store/endpoint-state.ts';
import { CANCEL_WITH_DELETION, waitingOf } from '../delivery-store/enqueue.ts';
import type { EndpointChange, EndpointRow, NewEndpoint, SealedTarget } from './rows.ts';
import type { ClearTarget, DestinationType } from './targets.ts';

export const ENDPOINTS_PER_PROJECT = 20;

/** An endpoint's record, with how many of its deliveries are pending (its queue rows). */
const RECORD = `id, url, event_types, active, paused, rate_limit_per_second, ordering,
  ${waitingOf('webhook_endpoints')} as waiting,
  previous_secret is not null as has_previous_secret, name, description, metadata, header_names, filter, auth, tls_certificate,
  destination_type, target, created_at`;

/** Why a deleted endpoint's pending deliveries were cancelled. */
export const DELETED = 'endpoint deleted';

/** A slot for one more endpoint of project $1 (of at most $18): the project's count, raised (if `also`). */
const slot = (also = '') => `slot as (
  update projects set webhook_endpoints = webhook_endpoints + 1
   where id = $1 and webhook_endpoints < $18 ${also}
  returning id
)`;

/** Of the types $19, project $1's catalogue declares exactly $20 (sorted): what the answer predicted. */
const DECLARES_AS_PREDICTED = `and array(
  select c.name from event_types c where c.project_id = $1 and c.name = any($19::text[]) order by c.name collate "C"
) = $20::text[]`;

/** The insert of a new endpoint ($1-$17) into the slot the `slot` CTE took; each caller says what it returns. */
const INSERT = `insert into webhook_endpoints (project_id, id, url, event_types, active_secret, created_at,
                                               name, description, metadata, header_names, headers_sealed,
                                               filter, filter_path, auth, auth_secret_sealed,
                                               tls_certificate, tls_key_sealed)
  select slot.id, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17 from slot`;

/** CTEs `gone` (the endpoint $2 of project $1 deleted, with its ordering) and `counted` (its slot given back). */
const DELETE = `gone as (
    delete from webhook_endpoints where project_id = $1 and id = $2 returning id, ordering
  ), counted as (
    update projects set webhook_endpoints = webhook_endpoints - 1 where id = $1 and exists (select from gone)
  )`;

/** The new secret $3 of endpoint $2 (project $1) made active, the active one kept as the previous. */
const ROTATE = `update webhook_endpoints set previous_secret = active_secret, active_secret = $3
  where project_id = $1 and id = $2`;

const newEndpointValues = (projectId: string, e: NewEndpoint) => [
  projectId,
  e.id,
  e.url,
  e.eventTypes,
  e.sealedSecret,
  e.createdAt,
  e.name,
  e.description,
  e.metadata,
  e.headerNames,
  e.sealedHeaders,
  e.filter?.pattern ?? null,
  e.filter?.path ?? null,
  e.auth?.clear ?? null,
  e.auth?.sealed ?? null,
  e.tls?.certificate ?? null,
  e.tls?.sealed ?? null,
];

export const endpointStore = (db: Db) => ({
  /**
   * Inserts the endpoint unless the project already has 20, in one statement: taking a slot is a
   * conditional update of the project's count, re-checked on the latest row when creates queue on it.
   */
  async insertWithinLimit(projectId: string, endpoint: NewEndpoint) {
    const { rows } = await db.query<EndpointRow>({
      name: 'webhook-endpoint-insert',
      text: `with ${slot()}
             ${INSERT}
             returning ${RECORD}`,
      values: [...newEndpointValues(projectId, endpoint), ENDPOINTS_PER_PROJECT],
    });
    return rows[0];
  },

  /**
   * The same insert as a sole write, predicted to take place, and predicted to find, of the types `outside`
   * the platform's registry, exactly `declared` in the project's catalogue.
   */
  insertSole: (
    projectId: string,
    endpoint: NewEndpoint,
    outside: string[],
    declared: string[],
  ): SoleWrite => ({
    name: 'webhook-endpoint-insert-sole',
    together: { locks: `projects/${projectId}` }, // it updates the project's row (its slot), and inserts
    ctes: `${slot(DECLARES_AS_PREDICTED)},
           endpoint as (${INSERT} returning id)`,
    check: 'exists (select from endpoint)',
    values: [...newEndpointValues(projectId, endpoint), ENDPOINTS_PER_PROJECT, outside, [...declared].sort()],
  }),

  /**
   * The endpoint's metadata, headers (their names, and sealed) and whether it has client credentials, its
   * row locked for the change that merges into them.
   */
  async receiverForUpdate(projectId: string, id: string) {
    const { rows } = await db.query<{
      metadata: Record<string, string>;
      header_names: string[];
      headers_sealed: Buffer | null;
      has_auth: boolean;
    }>(
      `select metadata, header_names, headers_sealed, auth is not null as has_auth
         from webhook_endpoints where project_id = $1 and id = $2 for update`,
      [projectId, id],
    );
    return rows[0];
  },

  async get(projectId: string, id: string) {
    const { rows } = await db.query<EndpointRow>({
      name: 'endpoint-get', // planned once per connection, as the list is
      text: `select ${RECORD} from webhook_endpoints where project_id = $1 and id = $2`,
      values: [projectId, id],
    });
    return rows[0];
  },

  /**
   * Applies a change (locking the row); the record after it, and what it was before (undefined when the
   * project has no such endpoint). A new rate starts afresh; re-enabling forgets the run of dead deliveries.
   */
  async update(projectId: string, id: string, change: EndpointChange) {
    const { rows } = await db.query<
      EndpointRow & {
        was_url: string;
        was_event_types: string[];
        was_rate: number | null;
        was_active: boolean;
        was_ordering: string;
        was_name: string | null;
        was_description: string | null;
        was_metadata: Record<string, string>;
        was_filter: Record<string, unknown> | null;
      }
    >(
      `update webhook_endpoints
          set url = coalesce($3, url),
              event_types = coalesce($4, event_types),
              rate_limit_per_second = case when $5 then $6 else rate_limit_per_second end,
              ${resetRateState('$5')},
              ordering = coalesce($7, ordering),
              active = coalesce($8, active),
              ${resetDeadStreak('$8 and not active')},
              name = case when $9 then $10 else name end,
              description = case when $11 then $12 else description end,
              metadata = coalesce($13, metadata),
              header_names = coalesce($14, header_names),
              headers_sealed = case when $14 is null then headers_sealed else $15 end,
              filter = case when $16 then $17 else filter end,
              filter_path = case when $16 then $18 else filter_path end,
              auth = case when $19 then $20 else auth end,
              auth_secret_sealed = case when $19 then $21 else auth_secret_sealed end,
              tls_certificate = case when $22 then $23 else tls_certificate end,
              tls_key_sealed = case when $22 then $24 else tls_key_sealed end
         from (select url as was_url, event_types as was_event_types, rate_limit_per_second as was_rate,
                      active as was_active, ordering as was_ordering, name as was_name,
                      description as was_description, metadata as was_metadata, filter as was_filter
                 from webhook_endpoints where project_id = $1 and id = $2 for update) as before
        where project_id = $1 and id = $2
       returning ${RECORD}, before.*`,
      [
        projectId,
        id,
        change.url ?? null,
        change.eventTypes ?? null,
        change.rateLimitPerSecond !== undefined,
        change.rateLimitPerSecond ?? null,
        change.ordering ?? null,
        change.active ?? null,
        change.name !== undefined,
        change.name ?? null,
        change.description !== undefined,
        change.description ?? null,
        change.metadata ?? null,
        change.headers?.names ?? null,
        change.headers?.sealed ?? null,
        change.filter !== undefined,
        change.filter?.pattern ?? null,
        change.filter?.path ?? null,
        change.auth !== undefined,
        change.auth?.clear ?? null,
        change.auth?.sealed ?? null,
        change.tls !== undefined,
        change.tls?.certificate ?? null,
        change.tls?.sealed ?? null,
      ],
    );
    return rows[0];
  },

  /** Pauses or resumes; the record, and whether it changed. */
  async setPaused(projectId: string, id: string, paused: boolean) {
    const { rows } = await db.query<EndpointRow & { changed: boolean }>(
      `update webhook_endpoints set paused = $3
         from (select paused <> $3 as changed from webhook_endpoints
                where project_id = $1 and id = $2 for update) as before
        where project_id = $1 and id = $2
       returning ${RECORD}, before.changed`,
      [projectId, id, paused],
    );
    return rows[0];
  },

  /** The project's destinations of every type, or its webhook endpoints only (`webhooks`), oldest first. */
  async list(projectId: string, webhooks = false) {
    // Named, so that each connection plans it once: its count of waiting deliveries spans every partition
    // of the deliveries, and planning it each time cost more than running it (docs/decisions/measured-choices.md).
    const { rows } = await db.query<EndpointRow>({
      name: webhooks ? 'endpoint-list' : 'destination-list',
      text: `select ${RECORD} from webhook_endpoints
              where project_id = $1 ${webhooks ? "and destination_type = 'webhook'" : ''}
              order by created_at, id`,
      values: [projectId],
    });
    return rows;
  },

  /** A destination's type, its target in clear and its password sealed (undefined when there is none). */
  async targetOf(projectId: string, id: string) {
    const { rows } = await db.query<{
      destination_type: DestinationType;
      target: ClearTarget | null;
      target_secret_sealed: Buffer | null;
    }>({
      name: 'destination-target',
      text: `select destination_type, target, target_secret_sealed from webhook_endpoints
              where project_id = $1 and id = $2`,
      values: [projectId, id],
    });
    return rows[0];
  },

  /**
   * Makes a new endpoint (this request's) a destination of another type, or changes a destination's target:
   * its type, its target in clear, its password sealed, and its URL without the password (empty for polling).
   */
  async setTarget(projectId: string, id: string, target: SealedTarget) {
    const { rows } = await db.query<EndpointRow>(
      `update webhook_endpoints
          set destination_type = $3, target = $4, target_secret_sealed = $5, url = $6
        where project_id = $1 and id = $2
       returning ${RECORD}`,
      [projectId, id, target.type, target.clear, target.sealed, target.clear.url ?? ''],
    );
    return rows[0];
  },

  /** Deletes the endpoint and its secrets, and gives its slot back to the project's count. */
  async delete(projectId: string, id: string) {
    const { rows } = await db.query<{ deleted: boolean }>(
      `with ${DELETE} select exists (select 1 from gone) as deleted`,
      [projectId, id],
    );
    return rows[0]?.deleted === true;
  },

  /**
   * The deletion as a sole write, predicted to find the endpoint unordered: it cancels the pending
   * deliveries in the same statement, without the lane lock an ordered endpoint's cancel takes first
   * (delivery-store/enqueue.ts cancelPending); a delivery queued meanwhile is cancelled by the worker that claims it.
   */
  deleteSole: (projectId: string, id: string): SoleWrite => ({
    name: 'webhook-endpoint-delete-sole',
    ctes: `${DELETE}, ${CANCEL_WITH_DELETION}`,
    check: `(select ordering = 'none' from gone)`,
    values: [projectId, id, DELETED],
    // Every worker lets go of what it holds of the endpoint (as cancelPending's notification says).
    notify: { channel: DELIVERIES_CHANNEL, payload: id },
  }),

  /** The rotation as a sole write, predicted to find the endpoint. */
  rotateSole: (projectId: string, id: string, sealedSecret: Buffer): SoleWrite => ({
    name: 'webhook-endpoint-rotate-sole',
    ctes: `rotated as (${ROTATE} returning id)`,
    check: 'exists (select from rotated)',
    values: [projectId, id, sealedSecret],
  }),

  /** The new secret becomes active; the active one becomes the previous one (an older previous is dropped). */
  async rotate(projectId: string, id: string, sealedSecret: Buffer) {
    const { rows } = await db.query<EndpointRow>(`${ROTATE} returning ${RECORD}`, [
      projectId,
      id,
      sealedSecret,
    ]);
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
