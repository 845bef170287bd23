// The project's logo, fetched by the service so that the portal's page loads nothing from another host
// (its CSP allows images from 'self' only). The fetch goes through the webhook address policy (a logo URL
// is an address a project gave, like an endpoint's), follows no redirect, takes only an image of at most
// 256 KiB, and is kept 10 minutes; a failure is kept 1 minute, so a dead logo costs one fetch a minute.
import { LRUCache } from 'lru-cache';
import { type Agent, request } from 'undici';

const MAX_BYTES = 256 * 1024;
const TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/svg+xml']);

export interface Logo {
  type: string;
  body: Buffer;
}

export function logoFetcher(options: { agent: Agent; timeoutMs: number; userAgent: string }) {
  // Requests for the same logo while it is fetched share the one fetch.
  const cache = new LRUCache<string, { logo: Logo | null }>({
    max: 500,
    ttl: 600_000,
    fetchMethod: async (url, _stale, { options: entry }) => {
      const logo = await fetchLogo(url);
      if (!logo) entry.ttl = 60_000;
      return { logo };
    },
  });

  async function fetchLogo(url: string): Promise<Logo | null> {
    try {
      const response = await request(url, {
        dispatcher: options.agent,
        headers: { accept: [...TYPES].join(', '), 'user-agent': options.userAgent },
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      const type =
        String(response.headers['content-type'] ?? '')
          .split(';')[0]
          ?.trim() ?? '';
      if (response.statusCode !== 200 || !TYPES.has(type)) {
        await response.body.dump();
        return null;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += chunk.length;
        if (size > MAX_BYTES) return null; // leaving the loop destroys the rest of the stream
        chunks.push(chunk);
      }
      return { type, body: Buffer.concat(chunks) };
    } catch {
      return null;
    }
  }

  return {
    /** The logo at this https address, or null when there is none to show. */
    async get(url: string): Promise<Logo | null> {
      return (await cache.fetch(url))?.logo ?? null;
    },
  };
}
