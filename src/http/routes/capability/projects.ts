// The installation's projects, for a capability an operator granted `projects:read` (a billing service
// invoicing each project): who each is, oldest first, a page at a time; nothing of their settings.

import { CAPABILITY_SCOPE } from '../../../keys/scopes.ts';
import { PageQuerySchema, pageOf } from '../../../lib/pagination.ts';
import { CapabilityProjectPageSchema } from '../../../projects/schema.ts';
import type { CapabilityRegistry } from '../../../registry.ts';
import { requireGrant } from '../../grants.ts';
import { errorResponses } from '../../problems.ts';
import { ref, routes } from '../common.ts';

export const capabilityProjectRoutes = (registry: CapabilityRegistry) =>
  routes([CapabilityProjectPageSchema], (app) => {
    app.get(
      '/capability/v1/projects',
      {
        config: { access: CAPABILITY_SCOPE },
        onRequest: requireGrant(registry, 'projects:read'),
        schema: {
          operationId: 'listProjectsForCapability',
          summary: 'The projects, oldest first, a page at a time (the grant projects:read)',
          tags: ['capability'],
          querystring: PageQuerySchema,
          response: { 200: ref('CapabilityProjectPage'), ...errorResponses(400, 403) },
        },
      },
      async (request) => {
        const page = await request.services.projects.list(undefined, pageOf(request.query));
        return {
          data: page.data.map(({ id, slug, name, mode, createdAt }) => ({ id, slug, name, mode, createdAt })),
          nextCursor: page.nextCursor,
        };
      },
    );
  });
