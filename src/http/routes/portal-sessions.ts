// /core/v1/portal-sessions: a project's key mints, lists and revokes the sessions of its developers'
// portal (never a session itself: a session cannot extend itself). The cookie's side is portal-session.ts.

import { PageQuerySchema, pageOf } from '../../lib/pagination.ts';
import {
  CreatePortalSessionBodySchema,
  PortalSessionCreatedSchema,
  PortalSessionPageSchema,
} from '../../portal/schema.ts';
import { principalOf, projectOf } from '../auth.ts';
import { errorResponses } from '../problems.ts';
import { IdempotencyHeaders, IdParamsSchema, projectIdOf, ref, routes } from './common.ts';

const tags = ['portal'];
const keyOnly = { portal: false } as const;

/** The routes; `publicUrl` is where users reach this service (the link's base). */
export const portalSessionRoutes = (publicUrl: () => string) =>
  routes([PortalSessionCreatedSchema, PortalSessionPageSchema], (app) => {
    app.post(
      '/core/v1/portal-sessions',
      {
        config: { ...keyOnly, access: 'webhooks:write' },
        schema: {
          operationId: 'createPortalSession',
          summary: 'A portal session for the project’s developers, and the one-time link that opens it',
          tags,
          headers: IdempotencyHeaders,
          body: CreatePortalSessionBodySchema,
          response: { 201: ref('PortalSessionCreated'), ...errorResponses(400, 403, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const principal = { ...principalOf(request), project: projectOf(request) };
        const created = await request.services.portal.create(principal, request.body, publicUrl());
        reply.code(201);
        return created;
      },
    );

    app.get(
      '/core/v1/portal-sessions',
      {
        config: { ...keyOnly, access: 'webhooks:read' },
        schema: {
          operationId: 'listPortalSessions',
          summary: 'The project’s portal sessions, newest first',
          tags,
          querystring: PageQuerySchema,
          response: { 200: ref('PortalSessionPage'), ...errorResponses(400, 403) },
        },
      },
      async (request) => request.services.portal.list(projectIdOf(request), pageOf(request.query)),
    );

    app.delete(
      '/core/v1/portal-sessions/:id',
      {
        config: { ...keyOnly, access: 'webhooks:write' },
        schema: {
          operationId: 'revokePortalSession',
          summary: 'End a portal session at once',
          tags,
          headers: IdempotencyHeaders,
          params: IdParamsSchema,
          response: { 204: { type: 'null' }, ...errorResponses(400, 403, 404, 409, 422) },
        },
      },
      async (request, reply) => {
        await request.services.portal.revoke(projectIdOf(request), request.params.id);
        reply.code(204);
      },
    );
  });
