// Every project's usage, for a capability an operator granted `usage:read` (a billing service): one
// project's usage as the project itself reads it, and the feed of every change of a day's total.
import { CAPABILITY_SCOPE } from '../../../keys/scopes.ts';
import type { CapabilityRegistry } from '../../../registry.ts';
import {
  ProjectUsageQuerySchema,
  UsageChangePageSchema,
  UsageChangesQuerySchema,
  UsageSchema,
} from '../../../usage/schema.ts';
import { requireGrant } from '../../grants.ts';
import { errorResponses } from '../../problems.ts';
import { ref, routes } from '../common.ts';

export const capabilityUsageRoutes = (registry: CapabilityRegistry) =>
  routes([UsageChangePageSchema, UsageSchema], (app) => {
    const granted = {
      config: { access: CAPABILITY_SCOPE },
      onRequest: requireGrant(registry, 'usage:read'),
    } as const;
    app.get(
      '/capability/v1/usage',
      {
        ...granted,
        schema: {
          operationId: 'getProjectUsageForCapability',
          summary:
            "A project's usage by UTC day, capability and metric, with its limits (the grant usage:read)",
          tags: ['capability'],
          querystring: ProjectUsageQuerySchema,
          response: { 200: ref('Usage'), ...errorResponses(400, 403, 404) },
        },
      },
      async (request) => {
        const { projectId, ...range } = request.query;
        const project = await request.services.projects.get(projectId);
        return request.services.usage.report(project.id, range);
      },
    );

    app.get(
      '/capability/v1/usage/changes',
      {
        ...granted,
        schema: {
          operationId: 'listUsageChanges',
          summary: 'Every change of a day’s total after the cursor, with the total as it stands (usage:read)',
          description:
            'In an order a reader resumes from forever: keep nextCursor and ask again with it. A total changed ' +
            'again after the cursor comes once more, with its new count. An empty page answers a cursor to poll with.',
          tags: ['capability'],
          querystring: UsageChangesQuerySchema,
          response: { 200: ref('UsageChangePage'), ...errorResponses(400, 403) },
        },
      },
      async (request) => request.services.usageChanges.page(request.query),
    );
  });
