// The management API's projects, their keys and their daily limits (operator keys; CONTRACT.md, Contract
// 0.2). Keys are revoked by id whatever they belong to (admin/audit.ts holds the audit log's route).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Context } from '../../../context.ts';
import type { Db } from '../../../db/database.ts';
import {
  ApiKeyPageSchema,
  ApiKeySchema,
  CreatedApiKeySchema,
  CreateKeyBodySchema,
} from '../../../keys/schema.ts';
import { keyService } from '../../../keys/service.ts';
import { PageQuerySchema, pageOf } from '../../../pagination.ts';
import {
  CreateProjectBodySchema,
  ProjectListQuerySchema,
  ProjectPageSchema,
  ProjectPatchSchema,
  ProjectSchema,
} from '../../../projects/schema.ts';
import { projectService } from '../../../projects/service.ts';
import { limitOverrides } from '../../../usage/overrides.ts';
import {
  EffectiveLimitSchema,
  EffectiveLimitsSchema,
  LimitBodySchema,
  LimitParamsSchema,
} from '../../../usage/schema.ts';
import { IdParamsSchema } from '../../../webhooks/schema.ts';
import { errorResponses } from '../../problems.ts';
import { auditOf, IdempotencyHeaders, ref, transactionOf } from '../common.ts';

const TAGS = ['admin'];

export const adminProjectRoutes =
  (context: Context): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const schema of [
      ProjectSchema,
      ProjectPageSchema,
      ApiKeySchema,
      CreatedApiKeySchema,
      ApiKeyPageSchema,
    ])
      app.addSchema(schema);
    for (const schema of [EffectiveLimitSchema, EffectiveLimitsSchema]) app.addSchema(schema);
    const projects = { access: 'projects:manage' as const };
    const keys = { access: 'keys:manage' as const };
    const limits = { access: 'limits:manage' as const };
    const overrides = (db: Db = context.db) =>
      limitOverrides(db, { registry: context.registry, defaults: context.config.dailyLimits });

    app.post(
      '/admin/v1/projects',
      {
        config: projects,
        schema: {
          operationId: 'createProject',
          summary: 'Create a project (a slug in use is 409 SLUG_TAKEN)',
          tags: TAGS,
          headers: IdempotencyHeaders,
          body: CreateProjectBodySchema,
          response: { 201: ref('Project'), ...errorResponses(400, 403, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        reply.code(201);
        return projectService(transactionOf(request)).create(request.body, auditOf(request));
      },
    );

    app.get(
      '/admin/v1/projects',
      {
        config: projects,
        schema: {
          operationId: 'listProjects',
          summary: 'The projects, oldest first, a page at a time; by slug prefix',
          tags: TAGS,
          querystring: ProjectListQuerySchema,
          response: { 200: ref('ProjectPage'), ...errorResponses(400, 403) },
        },
      },
      async (request) => projectService(context.db).list(request.query.slugPrefix, pageOf(request.query)),
    );

    app.get(
      '/admin/v1/projects/:id',
      {
        config: projects,
        schema: {
          operationId: 'getProject',
          summary: 'A project',
          tags: TAGS,
          params: IdParamsSchema,
          response: { 200: ref('Project'), ...errorResponses(403, 404) },
        },
      },
      async (request) => projectService(context.db).get(request.params.id),
    );

    app.patch(
      '/admin/v1/projects/:id',
      {
        config: projects,
        schema: {
          operationId: 'updateProject',
          summary: 'Change a project with a JSON merge patch (application/merge-patch+json)',
          description:
            'Name, languages, theme (field by field), retentionDays, portalFrameAncestors; slug, mode and id never change. ' +
            'projects/me shows the change within 5 s on every process.',
          tags: TAGS,
          headers: IdempotencyHeaders,
          params: IdParamsSchema,
          body: ProjectPatchSchema,
          response: { 200: ref('Project'), ...errorResponses(400, 403, 404, 409, 413, 415, 422) },
        },
      },
      async (request) =>
        projectService(transactionOf(request)).update(request.params.id, request.body, auditOf(request)),
    );

    app.post(
      '/admin/v1/projects/:id/keys',
      {
        config: keys,
        schema: {
          operationId: 'createProjectKey',
          summary: 'Make a key of the project; the key is shown this once',
          tags: TAGS,
          headers: IdempotencyHeaders,
          params: IdParamsSchema,
          body: CreateKeyBodySchema,
          response: { 201: ref('CreatedApiKey'), ...errorResponses(400, 403, 404, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const tx = transactionOf(request);
        const project = await projectService(tx).get(request.params.id);
        reply.code(201);
        return keyService(tx).create(project, request.body, auditOf(request));
      },
    );

    app.get(
      '/admin/v1/projects/:id/keys',
      {
        config: keys,
        schema: {
          operationId: 'listProjectKeys',
          summary: "The project's keys, newest first; never a key nor its hash",
          tags: TAGS,
          params: IdParamsSchema,
          querystring: PageQuerySchema,
          response: { 200: ref('ApiKeyPage'), ...errorResponses(400, 403, 404) },
        },
      },
      async (request) => {
        const project = await projectService(context.db).get(request.params.id);
        return keyService(context.db).list(project.id, pageOf(request.query));
      },
    );

    app.post(
      '/admin/v1/keys/:id/revoke',
      {
        config: keys,
        schema: {
          operationId: 'revokeKey',
          summary: 'Revoke a key (a project’s or an operator’s); again, the same answer',
          description: 'Every process refuses the key within 5 s.',
          tags: TAGS,
          headers: IdempotencyHeaders,
          params: IdParamsSchema,
          response: { 200: ref('ApiKey'), ...errorResponses(400, 403, 404, 409, 422) },
        },
      },
      async (request) =>
        (await keyService(transactionOf(request)).revoke(request.params.id, auditOf(request))).key,
    );

    app.get(
      '/admin/v1/projects/:id/limits',
      {
        config: limits,
        schema: {
          operationId: 'listProjectLimits',
          summary: "The project's daily limits, each marked default or project",
          tags: TAGS,
          params: IdParamsSchema,
          response: { 200: ref('EffectiveLimits'), ...errorResponses(403, 404) },
        },
      },
      async (request) => {
        const project = await projectService(context.db).get(request.params.id);
        return { data: await overrides().effective(project.id) };
      },
    );

    app.put(
      '/admin/v1/projects/:id/limits/:capability/:metric',
      {
        config: limits,
        schema: {
          operationId: 'setProjectLimit',
          summary: "Set the project's daily limit of a metric (every process applies it within 5 s)",
          tags: TAGS,
          headers: IdempotencyHeaders,
          params: LimitParamsSchema,
          body: LimitBodySchema,
          response: { 200: ref('EffectiveLimit'), ...errorResponses(400, 403, 404, 409, 413, 415, 422) },
        },
      },
      async (request) => {
        const tx = transactionOf(request);
        const { id, capability, metric } = request.params;
        const project = await projectService(tx).get(id);
        const limit = { capability, metric, dailyLimit: request.body.dailyLimit };
        return overrides(tx).set(project.id, limit, auditOf(request));
      },
    );

    app.delete(
      '/admin/v1/projects/:id/limits/:capability/:metric',
      {
        config: limits,
        schema: {
          operationId: 'clearProjectLimit',
          summary: "Clear the project's daily limit of a metric: back to the default",
          tags: TAGS,
          headers: IdempotencyHeaders,
          params: LimitParamsSchema,
          response: { 204: { type: 'null' }, ...errorResponses(400, 403, 404, 409, 422) },
        },
      },
      async (request, reply) => {
        const tx = transactionOf(request);
        const { id, capability, metric } = request.params;
        const project = await projectService(tx).get(id);
        await overrides(tx).clear(project.id, capability, metric, auditOf(request));
        reply.code(204);
      },
    );
  };
