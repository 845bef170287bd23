// Reading what happened to deliveries: an event's deliveries, and an endpoint's deliveries with their
// attempts, newest first, a page at a time.
import type { Db } from '../db/database.ts';
import { notFound, PlatformError } from '../errors.ts';

export interface DeliveryView {
  id: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  kind: string;
  state: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

export interface AttemptView {
  attempt: number;
  startedAt: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  succeeded: boolean;
  responseBody: string | null;
}

const VIEW = `d.id, d.event_id as "eventId", e.type as "eventType", d.endpoint_id as "endpointId", d.kind, d.state,
  d.attempts as "attemptCount",
  case when d.state = 'pending' then to_char(d.next_attempt_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') end as "nextAttemptAt",
  d.last_status as "lastStatus", d.last_error as "lastError",
  to_char(d.delivered_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "deliveredAt",
  to_char(d.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "createdAt"`;

const ATTEMPTS = `coalesce((
    select json_agg(json_build_object(
             'attempt', a.attempt,
             'startedAt', to_char(a.started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
             'durationMs', a.duration_ms, 'statusCode', a.status_code, 'error', a.error,
             'succeeded', a.succeeded, 'responseBody', a.response_body)
           order by a.attempt desc)
      from delivery_attempts a
     where a.project_id = d.project_id and a.delivery_id = d.id), '[]') as attempts`;

export interface Cursor {
  createdAt: string;
  id: string;
}

const encodeCursor = (cursor: Cursor) =>
  Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url');

function decodeCursor(value: string): Cursor | undefined {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(value, 'base64url').toString()) as [string, string];
    if (Number.isNaN(Date.parse(createdAt)) || !/^[0-9a-f-]{36}$/.test(id)) return undefined;
    return { createdAt, id };
  } catch {
    return undefined;
  }
}

export const deliveryHistory = (db: Db) => ({
  async ofEvent(projectId: string, eventId: string) {
    const { rows } = await db.query<DeliveryView>(
      `select ${VIEW} from deliveries d join events e on e.project_id = d.project_id and e.id = d.event_id
        where d.project_id = $1 and d.event_id = $2
        order by d.created_at, d.id`,
      [projectId, eventId],
    );
    return rows;
  },

  /** A page of the endpoint's deliveries with their attempts, newest first; one more than asked tells if more exist. */
  async ofEndpoint(projectId: string, endpointId: string, page: { limit: number; cursor?: string }) {
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
    if (page.cursor !== undefined && !after) {
      throw new PlatformError('VALIDATION_FAILED', 'the cursor is not one this API gave', {
        errors: [{ parameter: 'cursor', detail: 'unknown cursor' }],
      });
    }
    const { rowCount } = await db.query(`select 1 from webhook_endpoints where project_id = $1 and id = $2`, [
      projectId,
      endpointId,
    ]);
    if (rowCount !== 1) throw notFound('webhook endpoint');
    const { limit } = page;
    const { rows } = await db.query<DeliveryView & { attempts: AttemptView[] }>(
      `select ${VIEW}, ${ATTEMPTS}
         from deliveries d join events e on e.project_id = d.project_id and e.id = d.event_id
        where d.project_id = $1 and d.endpoint_id = $2
          and ($3::timestamptz is null or (d.created_at, d.id) < ($3::timestamptz, $4::uuid))
        order by d.created_at desc, d.id desc
        limit $5`,
      [projectId, endpointId, after?.createdAt ?? null, after?.id ?? null, limit + 1],
    );
    const data = rows.slice(0, limit);
    const last = data.at(-1);
    return {
      data,
      nextCursor:
        rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null,
    };
  },
});
