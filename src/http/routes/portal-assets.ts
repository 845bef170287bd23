// The portal's assets, as Vite built them (names carry a hash of their content), and the project's logo,
// fetched through the address policy and served from here (portal/logo.ts).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import type { Context } from '../../context.ts';
import { guardedAgent } from '../../delivery/sender.ts';
import { PlatformError } from '../../lib/errors.ts';
import { logoFetcher } from '../../portal/logo.ts';
import { portalToken } from '../auth.ts';
import { DIST } from './portal-pages.ts';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

export const portalAssetRoutes =
  (context: Pick<Context, 'config' | 'resolve'>): FastifyPluginAsync =>
  async (app) => {
    const options = { config: { access: 'public' as const }, schema: { hide: true } };
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
    // The project's logo: 404 when it has none or it cannot be had.
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

function readAsset(file: string): Buffer | undefined {
  try {
    return readFileSync(path.join(DIST, 'assets', file));
  } catch {
    return undefined;
  }
}
