// The portal's two faces on the API: /core/v1/portal-sessions, where a project's key mints, lists and
// revokes sessions (never a session itself: a session cannot extend itself), and /portal/session, where
// the portal's page trades a link's code for the session cookie, reads its session, and signs out.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../../context.ts';
import { PlatformError } from '../../errors.ts';
import { PageQuerySchema, pageOf } from '../../pagination.ts';
import {
  CreatePortalSessionBodySchema,
  ExchangeBodySchema,
  PortalSessionCreatedSchema,
  PortalSessionPageSchema,
} from '../../portal/schema.ts';
import { csrfMatches, portalService, type SessionPrincipal } from '../../portal/service.ts';
import { IdParamsSchema } from '../../webhooks/schema.ts';
import { portalToken, principalOf, projectOf } from '../auth.ts';
import { errorResponses } from '../problems.ts';
import { auditOf, IdempotencyHeaders, projectIdOf, ref, transactionOf } from './common.ts';

const TAGS = ['portal'];
const COOKIE = 'platform_portal';

export const portalSessionRoutes =
  (context: Context): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(PortalSessionCreatedSchema);
    app.addSchema(PortalSessionPageSchema);
    const keyOnly = { portal: false } as const;
    /** Where users reach this service: PLATFORM_PUBLIC_URL, else the address it listens on. */
    const publicUrl = () => {
      if (context.config.publicUrl) return context.config.publicUrl;
      const [first] = app.addresses();
      if (!first || typeof first === 'string') throw new Error('the API does not listen on a TCP address');
      const host = first.family === 'IPv6' ? `[${first.address}]` : first.address;
      return `http://${host}:${first.port}`;
    };

    app.post(
      '/core/v1/portal-sessions',
      {
        config: { ...keyOnly, access: 'webhooks:write' },
        schema: {
          operationId: 'createPortalSession',
          summary: 'A portal session for the project’s developers, and the one-time link that opens it',
          tags: TAGS,
          headers: IdempotencyHeaders,
          body: CreatePortalSessionBodySchema,
          response: { 201: ref('PortalSessionCreated'), ...errorResponses(400, 403, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const principal = { ...principalOf(request), project: projectOf(request) };
        const created = await portalService(transactionOf(request)).create(
          principal,
          request.body,
          publicUrl(),
          auditOf(request),
        );
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
          tags: TAGS,
          querystring: PageQuerySchema,
          response: { 200: ref('PortalSessionPage'), ...errorResponses(400, 403) },
        },
      },
      async (request) => portalService(context.db).list(projectIdOf(request), pageOf(request.query)),
    );

    app.delete(
      '/core/v1/portal-sessions/:id',
      {
        config: { ...keyOnly, access: 'webhooks:write' },
        schema: {
          operationId: 'revokePortalSession',
          summary: 'End a portal session at once',
          tags: TAGS,
          headers: IdempotencyHeaders,
          params: IdParamsSchema,
          response: { 204: { type: 'null' }, ...errorResponses(400, 403, 404, 409, 422) },
        },
      },
      async (request, reply) => {
        await portalService(transactionOf(request)).revoke(
          projectIdOf(request),
          request.params.id,
          auditOf(request),
        );
        reply.code(204);
      },
    );

    const hidden = { hide: true, tags: TAGS };
    app.post(
      '/portal/session',
      { config: { access: 'public' }, schema: { ...hidden, body: ExchangeBodySchema } },
      async (request, reply) => {
        const { token, principal } = await portalService(context.db).exchange(request.body.code);
        setCookie(request, reply, token, principal.expiresAt ?? Date.now());
        return describe(principal);
      },
    );
    app.get('/portal/session', { config: { access: 'public' }, schema: hidden }, async (request) => {
      const token = portalToken(request);
      if (!token) throw new PlatformError('PORTAL_SESSION_EXPIRED');
      return describe(await portalService(context.db).check(token));
    });
    app.delete(
      '/portal/session',
      { config: { access: 'public' }, schema: hidden },
      async (request, reply) => {
        // Signing out is a write made with the cookie: it carries the CSRF token as the others do.
        const token = portalToken(request);
        if (token) {
          const principal = await portalService(context.db)
            .check(token)
            .catch(() => undefined);
          if (principal && !csrfMatches(principal, request.headers['x-csrf-token']))
            throw new PlatformError('CSRF_TOKEN_INVALID');
          if (principal) await portalService(context.db).signOut(principal);
        }
        setCookie(request, reply, '', 0);
        reply.code(204);
      },
    );

    function setCookie(request: FastifyRequest, reply: FastifyReply, token: string, until: number) {
      const secure = request.protocol === 'https' || context.config.publicUrl?.startsWith('https:');
      const maxAge = Math.max(0, Math.floor((until - Date.now()) / 1000));
      reply.header(
        'set-cookie',
        `${COOKIE}=${token}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`,
      );
    }
  };

/** What the portal's page needs of its session: its project, language, scopes and CSRF token. */
const describe = (principal: SessionPrincipal) => ({
  project: principal.project,
  language: principal.session.language,
  scopes: [...principal.scopes],
  expiresAt: new Date(principal.expiresAt ?? 0).toISOString(),
  csrfToken: principal.session.csrfToken,
});
