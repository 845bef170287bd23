// Cursor pagination, as every list of the API pages (docs/api.md, Lists): `?limit` (1-100, default
// 20) and `?cursor`, answered as {data, nextCursor}. A cursor is the sort key of the last row given, opaque
// to clients; a list asks for one row more than the page to know whether another page follows.
import { Type } from 'typebox';
import { PlatformError } from './errors.ts';

/** The query members of a page, for lists that take filters too. */
export const pageFields = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'rows per page, default 20' })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
};

export const PageQuerySchema = Type.Object(pageFields, { additionalProperties: false });

/** A position in a list ordered by a time and an id. */
export interface Cursor {
  at: string;
  id: string;
}

export interface Page {
  limit: number;
  after: Cursor | undefined;
}

/** The page a query asks for; an unknown cursor is 400. */
export function pageOf(query: { limit?: number; cursor?: string }): Page {
  const limit = query.limit ?? 20;
  if (query.cursor === undefined) return { limit, after: undefined };
  const after = decode(query.cursor);
  if (!after) {
    throw new PlatformError('VALIDATION_FAILED', 'the cursor is not one this API gave', {
      errors: [{ parameter: 'cursor', detail: 'unknown cursor' }],
    });
  }
  return { limit, after };
}

/**
 * The end of a list's query over a time column and `id`: the page's keyset condition (rows after the
 * cursor), its order, and a limit of one row more than the page, as SQL whose parameters are numbered
 * from `first`, and their values. The list's own conditions come before it (`where … ${sql}`).
 */
export function keyset(page: Page, o: { at: string; order: 'newest' | 'oldest'; first: number }) {
  const [cmp, dir] = o.order === 'newest' ? ['<', 'desc'] : ['>', 'asc'];
  const [at, id, limit] = [o.first, o.first + 1, o.first + 2].map((n) => `$${n}`);
  return {
    sql: `and (${at}::timestamptz is null or (${o.at}, id) ${cmp} (${at}::timestamptz, ${id}::uuid))
        order by ${o.at} ${dir}, id ${dir}
        limit ${limit}`,
    values: [page.after?.at ?? null, page.after?.id ?? null, page.limit + 1],
  };
}

/** The page of rows fetched with limit + 1, and the cursor of the next page when there is one. */
export function pageFrom<T>(rows: T[], limit: number, cursorOf: (row: T) => Cursor) {
  const data = rows.slice(0, limit);
  const last = data.at(-1);
  return { data, nextCursor: rows.length > limit && last ? encode(cursorOf(last)) : null };
}

/** The cursor that continues a list after this position. */
export const encode = (cursor: Cursor) =>
  Buffer.from(JSON.stringify([cursor.at, cursor.id])).toString('base64url');

function decode(value: string): Cursor | undefined {
  try {
    const [at, id] = JSON.parse(Buffer.from(value, 'base64url').toString()) as [string, string];
    if (typeof at !== 'string' || Number.isNaN(Date.parse(at)) || !/^[0-9a-f-]{36}$/.test(id))
      return undefined;
    return { at, id };
  } catch {
    return undefined;
  }
}
