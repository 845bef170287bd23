// A project's daily limits as operators set them: the installation's defaults (PLATFORM_DAILY_LIMITS),
// overridden per project. Only a metric some capability counts can be limited (the registry says which);
// setting and clearing an override is audited. Every process applies a change before its answer
// (settings/lease.ts).

import type { Work } from '../audit/work.ts';
import { PlatformError } from '../lib/errors.ts';
import type { CapabilityRegistry } from '../registry.ts';
import { bindAtAnswer } from '../settings/lease.ts';
import type { DailyLimit } from './limits.ts';
import { usageStore } from './store.ts';

export interface EffectiveLimit extends DailyLimit {
  source: 'default' | 'project';
}

export const limitOverrides = (
  { db, hooks, audit }: Work,
  deps: {
    registry: CapabilityRegistry;
    defaults: () => DailyLimit[];
    /** the metrics the capabilities' manifests declare now, read in the change's transaction */
    declaredMetrics: () => Promise<string[]>;
  },
) => {
  const store = usageStore(db);

  /** A metric some capability counts: registered in code, or declared by a manifest now. */
  async function requireKnown(capability: string, metric: string) {
    const known = [...deps.registry.metrics(), ...(await deps.declaredMetrics())];
    if (!known.includes(`${capability}/${metric}`)) {
      const detail = `no capability counts ${capability}/${metric}; the metrics are ${known.join(', ')}`;
      throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ parameter: 'metric', detail }] });
    }
  }

  return {
    /** Every limit that applies to the project, marked default or project, by capability and metric. */
    async effective(projectId: string): Promise<EffectiveLimit[]> {
      const limits = new Map<string, EffectiveLimit>();
      for (const limit of deps.defaults())
        limits.set(`${limit.capability}/${limit.metric}`, { ...limit, source: 'default' });
      for (const row of await store.limits([projectId])) {
        const { capability, metric, daily_limit: dailyLimit } = row;
        limits.set(`${capability}/${metric}`, { capability, metric, dailyLimit, source: 'project' });
      }
      return [...limits.values()].sort(
        (a, b) => a.capability.localeCompare(b.capability) || a.metric.localeCompare(b.metric),
      );
    },

    async set(projectId: string, limit: DailyLimit): Promise<EffectiveLimit> {
      await requireKnown(limit.capability, limit.metric);
      await store.setLimit(projectId, limit.capability, limit.metric, limit.dailyLimit);
      await bindAtAnswer({ db, hooks }, { kind: 'limits', projectId });
      audit({
        action: 'limit.set',
        projectId,
        target: { type: 'limit', id: `${limit.capability}/${limit.metric}` },
        fields: ['dailyLimit'],
      });
      return { ...limit, source: 'project' };
    },

    /** Back to the default; nothing to clear changes nothing. */
    async clear(projectId: string, capability: string, metric: string) {
      await requireKnown(capability, metric);
      if (!(await store.clearLimit(projectId, capability, metric))) return;
      await bindAtAnswer({ db, hooks }, { kind: 'limits', projectId });
      audit({
        action: 'limit.cleared',
        projectId,
        target: { type: 'limit', id: `${capability}/${metric}` },
        fields: ['dailyLimit'],
      });
    },
  };
};
