// The date range of a usage report: UTC days, both ends inclusive, at most 92 days. Without dates, the
// last 30 days, today included; `to` alone → the 30 days ending at `to`; `from` alone → from `from` to today.
import { DAY_MS, utcDay } from '../lib/clock.ts';
import { PlatformError } from '../lib/errors.ts';

export const MAX_RANGE_DAYS = 92;
export const DEFAULT_RANGE_DAYS = 30;
const SHAPE = /^\d{4}-\d{2}-\d{2}$/;

const refuse = (parameter: string, detail: string) =>
  new PlatformError('USAGE_RANGE_INVALID', detail, { errors: [{ parameter, detail }] });

function parseDay(parameter: string, value: string): number {
  if (!SHAPE.test(value))
    throw refuse(parameter, `${parameter} must be a date written YYYY-MM-DD (got "${value}")`);
  const [year, month, day] = value.split('-').map(Number) as [number, number, number];
  const time = Date.UTC(year, month - 1, day);
  if (utcDay(time) !== value) throw refuse(parameter, `${parameter} is not a calendar date (${value})`);
  return time;
}

export function usageRange(query: { from?: string; to?: string }, now: Date): { from: string; to: string } {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const to = query.to === undefined ? undefined : parseDay('to', query.to);
  const from = query.from === undefined ? undefined : parseDay('from', query.from);
  const end = to ?? today;
  const start = from ?? end - (DEFAULT_RANGE_DAYS - 1) * DAY_MS;
  if (start > end) throw refuse('from', `from (${utcDay(start)}) is after to (${utcDay(end)})`);
  const days = (end - start) / DAY_MS + 1;
  if (days > MAX_RANGE_DAYS)
    throw refuse('to', `the range covers ${days} days; at most ${MAX_RANGE_DAYS} are allowed`);
  return { from: utcDay(start), to: utcDay(end) };
}
