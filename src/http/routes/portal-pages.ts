// The portal's pages and assets, as Vite built them into web/portal/dist (npm ci runs the build). Every
// page is the same document under a strict Content-Security-Policy: nothing inline, nothing from another
// host, and framed only by the origins the project lists (portalFrameAncestors), none by default.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../../context.ts';
import { guardedAgent } from '../../delivery/sender.ts';
import { PlatformError } from '../../errors.ts';
import { logoFetcher } from '../../portal/logo.ts';
import { portalToken } from '../auth.ts';

const DIST = new URL('../../../web/portal/dist/', import.meta.url).pathname;
const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};
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

export const portalPageRoutes =
  (context: Context): FastifyPluginAsync =>
  async (app) => {
    const index = readIndex();
    const options = { config: { access: 'public' as const }, schema: { hide: true } };
    const page = (reply: FastifyReply, frameAncestors: string[]) => {
      if (!index)
        throw new PlatformError(
          'SERVICE_UNAVAILABLE',
          'the portal is not built: npm run build -w web/portal',
        );
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

    // The project's logo, served from here (see portal/logo.ts); 404 when it has none or it cannot be had.
    const { config } = context;
    const timeoutMs = 5000;
    const agent = guardedAgent({
      allowPrivate: config.webhookAllowPrivate,
      resolve: context.resolve,
      timeoutMs,
      connections: 4,
    });
    app.addHook('onClose', () => agent.close());
    const logos = logoFetcher({ agent, timeoutMs, userAgent: `platform-core/${config.version}` });
    app.get('/portal/logo', options, async (request, reply) => {
      const token = portalToken(request);
      const principal = token ? await request.services.portal.check(token) : undefined;
      const url = principal?.project.theme.logoUrl;
      const logo = url ? await logos.get(url) : null;
      if (!logo) throw new PlatformError('NOT_FOUND', 'no logo');
      return reply
        .type(logo.type)
        .header('cache-control', 'private, max-age=600')
        .header('content-security-policy', "default-src 'none'; sandbox") // an SVG opened on its own runs nothing
        .send(logo.body);
    });

    app.get<{ Params: { file: string } }>('/portal/assets/:file', options, async (request, reply) => {
      const { file } = request.params;
      const type = TYPES[path.extname(file)];
      if (!/^[\w.-]+$/.test(file) || !type) throw new PlatformError('NOT_FOUND', 'no such asset');
      const content = readAsset(file);
      if (!content) throw new PlatformError('NOT_FOUND', 'no such asset');
      // Names carry a hash of their content: cached for a year.
      return reply.type(type).header('cache-control', 'public, max-age=31536000, immutable').send(content);
    });
  };

function readIndex(): string | undefined {
  try {
    return readFileSync(path.join(DIST, 'index.html'), 'utf8');
  } catch {
    return undefined;
  }
}

function readAsset(file: string): Buffer | undefined {
  try {
    return readFileSync(path.join(DIST, 'assets', file));
  } catch {
    return undefined;
  }
}
