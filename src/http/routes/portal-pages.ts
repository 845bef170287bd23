// The portal's pages, as Vite built them into web/portal/dist (npm ci runs the build). Every
// page is the same document under a strict Content-Security-Policy: nothing inline, nothing from another
// host, and framed only by the origins the project lists (portalFrameAncestors), none by default. Its
// assets and the project's logo: portal-assets.ts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { PlatformError } from '../../lib/errors.ts';
import { portalToken } from '../auth.ts';

export const DIST = new URL('../../../web/portal/dist/', import.meta.url).pathname;
const PAGES = [
  '/portal',
  '/portal/',
  '/portal/endpoints/:id',
  '/portal/events/:id',
  '/portal/usage',
  '/portal/event-types',
  '/portal/events',
];

const csp = (frameAncestors: string) =>
  [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "font-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${frameAncestors}`,
  ].join('; ');

export const portalPageRoutes = (): FastifyPluginAsync => async (app) => {
  const index = readIndex();
  const options = { config: { access: 'public' as const }, schema: { hide: true } };
  const page = (reply: FastifyReply, frameAncestors: string[]) => {
    if (!index)
      throw new PlatformError('SERVICE_UNAVAILABLE', 'the portal is not built: npm run build -w web/portal');
    if (frameAncestors.length === 0) reply.header('x-frame-options', 'DENY');
    return reply
      .header('content-security-policy', csp(frameAncestors.join(' ') || "'none'"))
      .header('referrer-policy', 'no-referrer')
      .type('text/html; charset=utf-8')
      .send(index);
  };
  /** The origins that may frame the portal of the cookie's session: none without one. */
  const ancestorsOf = async (request: FastifyRequest) => {
    const token = portalToken(request);
    if (!token) return [];
    const principal = await request.services.portal.check(token).catch(() => undefined);
    return principal?.session.frameAncestors ?? [];
  };

  for (const url of PAGES)
    app.get(url, options, async (request, reply) => page(reply, await ancestorsOf(request)));
  // The link's page holds no session yet (its code is in the fragment) and shows nothing: it trades the
  // code and loads /portal/ again, which the project's frame-ancestors then govern.
  app.get('/portal/enter', options, async (_request, reply) => page(reply, ['*']));
};

function readIndex(): string | undefined {
  try {
    return readFileSync(path.join(DIST, 'index.html'), 'utf8');
  } catch {
    return undefined;
  }
}
