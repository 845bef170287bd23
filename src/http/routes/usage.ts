import type { FastifyInstance } from 'fastify';
import type { Context } from '../../context.ts';
import { usageRange } from '../../usage/range.ts';
import { UsageQuerySchema, UsageSchema } from '../../usage/schema.ts';
import { usageStore } from '../../usage/store.ts';
import { principalOf } from '../auth.ts';
import { errorResponses } from '../problems.ts';

export const usageRoutes = (context: Context) => async (app: FastifyInstance) => {
  app.addSchema(UsageSchema);
  app.get(
    '/core/v1/usage',
    {
      config: { access: 'usage:read' },
      schema: {
        summary: 'Usage by UTC day, capability and metric, with the daily limits',
        tags: ['usage'],
        querystring: UsageQuerySchema,
        response: { 200: { $ref: 'Usage#' }, ...errorResponses(400, 403) },
      },
    },
    async (request) => {
      const projectId = principalOf(request).project.id;
      const { from, to } = usageRange(request.query as { from?: string; to?: string }, context.clock.now());
      // What this process counted but has not flushed yet is part of today's figures too.
      const flushed = await context.meter.readFlushed(() =>
        usageStore(context.db).range(projectId, from, to),
      );
      const counts = new Map<string, { day: string; capability: string; metric: string; count: number }>();
      for (const row of flushed.value) {
        counts.set(`${row.day}|${row.capability}|${row.metric}`, { ...row });
      }
      for (const pending of context.meter.pending(projectId)) {
        if (pending.day < from || pending.day > to) continue;
        const key = `${pending.day}|${pending.capability}|${pending.metric}`;
        const row = counts.get(key) ?? {
          day: pending.day,
          capability: pending.capability,
          metric: pending.metric,
          count: 0,
        };
        row.count += pending.count;
        counts.set(key, row);
      }
      const data = [...counts.values()].sort(
        (a, b) =>
          a.day.localeCompare(b.day) ||
          a.capability.localeCompare(b.capability) ||
          a.metric.localeCompare(b.metric),
      );
      return { from, to, data, limits: await context.limits.effective(projectId) };
    },
  );
};
