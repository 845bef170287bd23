// A polling destination's feed (migration 0033): what the worker appends as it delivers, and what its
// consumer reads from a cursor it keeps. Reads go up to the oldest transaction still running, in (xid,
// seq) order, so an append not yet committed never lands behind a cursor already handed out.
import type { Db } from '../db/database.ts';

export interface FeedEntry {
  projectId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  eventCreatedAt: Date;
  /** the webhook payload as sent, byte for byte */
  payload: string;
}

/** The JSON object a page answers for an entry: its payload spliced in as sent, never parsed again. */
export function feedEntry(entry: FeedEntry) {
  return `{"eventId":"${entry.eventId}","type":${JSON.stringify(entry.eventType)},"timestamp":"${entry.eventCreatedAt.toISOString()}","payload":${entry.payload}}`;
}

/** Where a consumer is: past the entry of transaction `xid`, number `seq` (both as text; 0 0 before all). */
export interface FeedCursor {
  xid: string;
  seq: string;
}

/** A page of the feed: its entries as the answer's JSON text, and where the last one stands. */
export interface FeedPage {
  /** the entries as JSON objects joined by commas, each payload spliced in as stored */
  entries: string;
  last: FeedCursor | null;
}

export const feedStore = (db: Db) => ({
  /** Appends one delivery to its destination's feed (committed on its own): its number in the feed. */
  async append(entry: FeedEntry) {
    const { rows } = await db.query<{ seq: string }>({
      name: 'feed-append',
      text: `insert into destination_messages (project_id, endpoint_id, event_id, event_type, event_created_at, entry)
             values ($1, $2, $3, $4, $5, $6) returning seq`,
      values: [
        entry.projectId,
        entry.endpointId,
        entry.eventId,
        entry.eventType,
        entry.eventCreatedAt,
        feedEntry(entry),
      ],
    });
    return (rows[0] as { seq: string }).seq;
  },

  /**
   * Up to `limit` entries after the cursor, in feed order, of those every running transaction can see:
   * the entries joined as the page's JSON, and where the last one stands. Read as rows and joined here:
   * joined in PostgreSQL (string_agg), a page of 1,000 took twice as long to read.
   */
  async read(projectId: string, endpointId: string, after: FeedCursor, limit: number): Promise<FeedPage> {
    const { rows } = await db.query<{ xid: string; seq: string; entry: string }>({
      name: 'feed-read',
      // Ordered by the columns, not the text the answer takes of them (an output name wins in ORDER BY:
      // ordered as text, transaction 1009 came before 982).
      text: `select m.xid::text, m.seq::text, m.entry
               from destination_messages m
              where m.project_id = $1 and m.endpoint_id = $2
                and (m.xid, m.seq) > ($3::xid8, $4::bigint)
                and m.xid < pg_snapshot_xmin(pg_current_snapshot())
              order by m.xid, m.seq
              limit $5`,
      values: [projectId, endpointId, after.xid, after.seq, limit],
    });
    const last = rows.at(-1);
    const entries = rows.map((row) => row.entry).join(',');
    return { entries, last: last ? { xid: last.xid, seq: last.seq } : null };
  },

  /** Forgets what is older than the history's horizon, a batch at a time: how many. */
  async forgetBefore(horizon: string, batch = 5000) {
    const { rowCount } = await db.query(
      `delete from destination_messages where ctid = any (array(
         select ctid from destination_messages where event_created_at < $1::timestamptz limit $2))`,
      [horizon, batch],
    );
    return rowCount ?? 0;
  },
});
