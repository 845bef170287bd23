// The usage change feed (contract 0.4): every change of a day's total after a cursor, with the total as it
// stands, in an order a reader resumes from forever (migration 0028 says why nothing is skipped). The
// cursor is opaque to readers: the position of the last total given. An empty page answers the cursor it
// was asked with, to poll with again.
import type { Db } from '../db/database.ts';
import { PlatformError } from '../lib/errors.ts';
import { type UsagePosition, usageStore } from './store.ts';

const encode = (p: UsagePosition) =>
  Buffer.from(JSON.stringify([p.xid, p.projectId, p.day, p.capability, p.metric])).toString('base64url');

/** The position a cursor stands for; a cursor this service did not give is a 400. */
function decode(cursor: string): UsagePosition {
  try {
    const [xid, projectId, day, capability, metric] = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    const valid =
      /^\d{1,20}$/.test(xid) &&
      /^[0-9a-f-]{36}$/.test(projectId) &&
      /^\d{4}-\d{2}-\d{2}$/.test(day) &&
      typeof capability === 'string' &&
      typeof metric === 'string';
    if (valid) return { xid, projectId, day, capability, metric };
  } catch {}
  throw new PlatformError('VALIDATION_FAILED', 'the cursor is not one this feed gave', {
    errors: [{ parameter: 'cursor', detail: 'unknown cursor' }],
  });
}

/** The start of the feed: before every total. */
const START = Buffer.from('[]').toString('base64url');

export const usageChanges = (db: Db) => ({
  async page(query: { cursor?: string; limit?: number }) {
    const after = query.cursor === undefined || query.cursor === START ? undefined : decode(query.cursor);
    const rows = await usageStore(db).changes(after, query.limit ?? 100);
    const last = rows.at(-1);
    return {
      data: rows.map(({ projectId, day, capability, metric, count }) => ({
        projectId,
        day,
        capability,
        metric,
        count,
      })),
      nextCursor: last ? encode(last) : (query.cursor ?? START),
    };
  },
});
