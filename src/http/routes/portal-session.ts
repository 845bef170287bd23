// /portal/session: where the portal's page trades a link's code for the session cookie, reads its
// session, and signs out (hidden from the API's document: only the portal calls it).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PlatformError } from '../../lib/errors.ts';
import { ExchangeBodySchema } from '../../portal/schema.ts';
import { csrfMatches, type SessionPrincipal } from '../../portal/service.ts';
import { portalToken } from '../auth.ts';
import { routes } from './common.ts';

const COOKIE = 'platform_portal';
const hidden = { hide: true, tags: ['portal'] };
const config = { access: 'public' as const };

/** The routes; the cookie is Secure over https, or when the public address is. */
export const portalSessionCookieRoutes = (publicUrl: string | undefined) =>
  routes([], (app) => {
    const setCookie = (request: FastifyRequest, reply: FastifyReply, token: string, until: number) => {
      const secure = request.protocol === 'https' || publicUrl?.startsWith('https:');
      const maxAge = Math.max(0, Math.floor((until - Date.now()) / 1000));
      reply.header(
        'set-cookie',
        `${COOKIE}=${token}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`,
      );
    };

    app.post(
      '/portal/session',
      { config, schema: { ...hidden, body: ExchangeBodySchema } },
      async (request, reply) => {
        const { token, principal } = await request.services.portal.exchange(request.body.code);
        setCookie(request, reply, token, principal.expiresAt ?? Date.now());
        return describe(principal);
      },
    );

    app.get('/portal/session', { config, schema: hidden }, async (request) => {
      const token = portalToken(request);
      if (!token) throw new PlatformError('PORTAL_SESSION_EXPIRED');
      return describe(await request.services.portal.check(token));
    });

    app.delete('/portal/session', { config, schema: hidden }, async (request, reply) => {
      // Signing out is a write made with the cookie: it carries the CSRF token as the others do.
      const token = portalToken(request);
      const { portal } = request.services;
      const principal = token ? await portal.check(token).catch(() => undefined) : undefined;
      if (principal && !csrfMatches(principal, request.headers['x-csrf-token']))
        throw new PlatformError('CSRF_TOKEN_INVALID');
      if (principal) await portal.signOut(principal);
      setCookie(request, reply, '', 0);
      reply.code(204);
    });
  });

/** What the portal's page needs of its session: its project, language, scopes and CSRF token. */
const describe = (principal: SessionPrincipal) => ({
  project: principal.project,
  language: principal.session.language,
  scopes: [...principal.scopes],
  expiresAt: new Date(principal.expiresAt ?? 0).toISOString(),
  csrfToken: principal.session.csrfToken,
});
