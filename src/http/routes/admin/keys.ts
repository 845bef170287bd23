// The management API's keys: a project's made and listed, any key revoked by its id (a project's or an
// operator's). Operator keys themselves are made on the server (platform operator-keys create).
import {
  ApiKeyPageSchema,
  ApiKeySchema,
  CreatedApiKeySchema,
  CreateKeyBodySchema,
} from '../../../keys/schema.ts';
import { PageQuerySchema, pageOf } from '../../../lib/pagination.ts';
import { errorResponses } from '../../problems.ts';
import { IdempotencyHeaders, IdParamsSchema, ref, routes } from '../common.ts';

const tags = ['admin'];
const config = { access: 'keys:manage' as const };

export const adminKeyRoutes = routes([ApiKeySchema, CreatedApiKeySchema, ApiKeyPageSchema], (app) => {
  app.post(
    '/admin/v1/projects/:id/keys',
    {
      config,
      schema: {
        operationId: 'createProjectKey',
        summary: 'Make a key of the project; the key is shown this once',
        tags,
        headers: IdempotencyHeaders,
        params: IdParamsSchema,
        body: CreateKeyBodySchema,
        response: { 201: ref('CreatedApiKey'), ...errorResponses(400, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const { projects, keys } = request.services;
      const project = await projects.get(request.params.id);
      reply.code(201);
      return keys.create(project, request.body);
    },
  );

  app.get(
    '/admin/v1/projects/:id/keys',
    {
      config,
      schema: {
        operationId: 'listProjectKeys',
        summary: "The project's keys, newest first; never a key nor its hash",
        tags,
        params: IdParamsSchema,
        querystring: PageQuerySchema,
        response: { 200: ref('ApiKeyPage'), ...errorResponses(400, 403, 404) },
      },
    },
    async (request) => {
      const { projects, keys } = request.services;
      const project = await projects.get(request.params.id);
      return keys.list(project.id, pageOf(request.query));
    },
  );

  app.post(
    '/admin/v1/keys/:id/revoke',
    {
      config,
      schema: {
        operationId: 'revokeKey',
        summary: 'Revoke a key (a project’s or an operator’s); again, the same answer',
        description: 'Every process refuses the key within 5 s.',
        tags,
        headers: IdempotencyHeaders,
        params: IdParamsSchema,
        response: { 200: ref('ApiKey'), ...errorResponses(400, 403, 404, 409, 422) },
      },
    },
    async (request) => (await request.services.keys.revoke(request.params.id)).key,
  );
});
