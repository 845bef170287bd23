import { ProjectMeSchema } from '../../projects/schema.ts';
import { principalOf } from '../auth.ts';
import { errorResponses } from '../problems.ts';
import { ref, routes } from './common.ts';

export const projectRoutes = routes([ProjectMeSchema], (app) => {
  app.get(
    '/core/v1/projects/me',
    {
      config: { access: 'projects:read', dailyAllowance: false },
      schema: {
        operationId: 'getCurrentProject',
        summary: 'The project the key belongs to, with its theme and languages',
        tags: ['projects'],
        response: { 200: ref('ProjectMe'), ...errorResponses(403) },
      },
    },
    // The principal carries its project (cached with the key for at most 5 s): no query here.
    async (request) => principalOf(request).project,
  );
});
