// Usage as a test reads it back from GET /core/v1/usage (by default the last 30 days, today included):
// a metric's count summed over the days of the answer, so that a run crossing midnight UTC between a
// write and its read still finds all of it.

export interface UsageRow {
  day: string;
  capability: string;
  metric: string;
  count: number;
}

/** The count of one capability's metric, over every day the answer holds. */
export const countOf = (rows: UsageRow[], capability: string, metric: string): number =>
  rows
    .filter((row) => row.capability === capability && row.metric === metric)
    .reduce((sum, row) => sum + row.count, 0);
