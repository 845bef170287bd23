// The management API's projects (operator keys; docs/management.md): created, listed, read and
// merge-patched. Their keys are admin/keys.ts's, their daily limits admin/limits.ts's.

import { pageOf } from '../../../lib/pagination.ts';
import {
  CreateProjectBodySchema,
  ProjectListQuerySchema,
  ProjectPageSchema,
  ProjectPatchSchema,
  ProjectSchema,
} from '../../../projects/schema.ts';
import { errorResponses } from '../../problems.ts';
import { IdempotencyHeaders, IdParamsSchema, ref, routes } from '../common.ts';

const tags = ['admin'];
const config = { access: 'projects:manage' as const };

export const adminProjectRoutes = routes([ProjectSchema, ProjectPageSchema], (app) => {
  app.post(
    '/admin/v1/projects',
    {
      config,
      schema: {
        operationId: 'createProject',
        summary: 'Create a project (a slug in use is 409 SLUG_TAKEN)',
        tags,
        headers: IdempotencyHeaders,
        body: CreateProjectBodySchema,
        response: { 201: ref('Project'), ...errorResponses(400, 403, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return request.services.projects.create(request.body);
    },
  );

  app.get(
    '/admin/v1/projects',
    {
      config,
      schema: {
        operationId: 'listProjects',
        summary: 'The projects, oldest first, a page at a time; by slug prefix',
        tags,
        querystring: ProjectListQuerySchema,
        response: { 200: ref('ProjectPage'), ...errorResponses(400, 403) },
      },
    },
    async (request) => request.services.projects.list(request.query.slugPrefix, pageOf(request.query)),
  );

  app.get(
    '/admin/v1/projects/:id',
    {
      config,
      schema: {
        operationId: 'getProject',
        summary: 'A project',
        tags,
        params: IdParamsSchema,
        response: { 200: ref('Project'), ...errorResponses(403, 404) },
      },
    },
    async (request) => request.services.projects.get(request.params.id),
  );

  app.patch(
    '/admin/v1/projects/:id',
    {
      config,
      schema: {
        operationId: 'updateProject',
        summary: 'Change a project with a JSON merge patch (application/merge-patch+json)',
        description:
          'Name, languages, theme (field by field), retentionDays, portalFrameAncestors; slug, mode and id never change. ' +
          'projects/me shows the change within 5 s on every process.',
        tags,
        headers: IdempotencyHeaders,
        params: IdParamsSchema,
        body: ProjectPatchSchema,
        response: { 200: ref('Project'), ...errorResponses(400, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request) => request.services.projects.update(request.params.id, request.body),
  );
});
