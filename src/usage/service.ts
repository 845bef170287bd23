// The usage report: counts by UTC day, capability and metric over a range, with the daily limits. What
// this process counted but has not flushed yet is part of today's figures too.

import type { Db } from '../db/database.ts';
import type { Clock } from '../lib/clock.ts';
import type { UsageLimits } from './limits.ts';
import type { Meter } from './meter.ts';
import { usageRange } from './range.ts';
import { usageStore } from './store.ts';

interface Count {
  day: string;
  capability: string;
  metric: string;
  count: number;
}

export const usageService = (deps: { db: Db; clock: Clock; meter: Meter; limits: UsageLimits }) => ({
  async report(projectId: string, query: { from?: string; to?: string }) {
    const { from, to } = usageRange(query, deps.clock.now());
    const flushed = await deps.meter.readFlushed(() => usageStore(deps.db).range(projectId, from, to));
    const counts = new Map<string, Count>();
    const add = ({ day, capability, metric, count }: Count) => {
      const key = `${day}|${capability}|${metric}`;
      const existing = counts.get(key);
      if (existing) existing.count += count;
      else counts.set(key, { day, capability, metric, count });
    };
    for (const row of flushed) add(row);
    for (const pending of deps.meter.pending(projectId))
      if (pending.day >= from && pending.day <= to) add(pending);
    const data = [...counts.values()].sort(
      (a, b) =>
        a.day.localeCompare(b.day) ||
        a.capability.localeCompare(b.capability) ||
        a.metric.localeCompare(b.metric),
    );
    return { from, to, data, limits: await deps.limits.effective(projectId) };
  },
});
