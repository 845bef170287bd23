// The routes the gateway serves (docs/capabilities.md): a capability's manifest declares them, served at
// `/<capability><path>` and forwarded to `<upstream><path>`. A request's path is matched as received,
// and the upstream receives exactly those bytes (http/gateway.ts never rebuilds them with a URL parser).
// So a path that some parser, framework or proxy on the way could read as another path matches nothing:
// it is a 404 like any path no route declares, before any upstream call (docs/decisions/gateway-paths.md).
import type { CapabilityRegistry, GatewayRoute } from '../../registry.ts';

export interface GatewayMatch {
  capability: string;
  upstream: string;
  route: GatewayRoute;
  /** the path after `/<capability>` and the query string, as received (still encoded) */
  target: string;
}

/**
 * A raw path (no query) that no parser, framework or proxy on the way can read as another path: visible
 * ASCII only; no backslash, `;` or `#`; every `%` followed by two hex digits; no empty segment; and each
 * segment, once decoded (valid UTF-8, so no overlong slash) and folded by NFKC (so no fullwidth dot or
 * solidus), is neither `.` nor `..` and holds no slash, backslash, `;` or control byte. Linear in the path.
 */
export function isExactPath(path: string): boolean {
  if (!path.startsWith('/')) return false;
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i);
    if (code <= 0x20 || code >= 0x7f || code === 0x5c || code === 0x3b || code === 0x23) return false;
    if (code === 0x25 && !/^[0-9a-fA-F]{2}$/.test(path.slice(i + 1, i + 3))) return false;
  }
  for (const segment of path.slice(1).split('/')) {
    if (segment === '') return false;
    const read = decoded(segment);
    if (read === undefined || read === '.' || read === '..' || UNSAFE_DECODED.test(read)) return false;
  }
  return true;
}

/** What a decoded segment may not hold: a slash, a backslash, a `;`, or a control byte. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control bytes are exactly what it refuses
const UNSAFE_DECODED = /[/\\;\x00-\x1f\x7f]/;

/** A segment as a lenient reader sees it: percent-decoded, then NFKC-folded; undefined when not UTF-8. */
function decoded(segment: string): string | undefined {
  if (!segment.includes('%')) return segment; // visible ASCII: NFKC leaves it as it is
  try {
    return decodeURIComponent(segment).normalize('NFKC');
  } catch {
    return undefined;
  }
}

const compiled = new WeakMap<GatewayRoute, RegExp>();
const patternOf = (route: GatewayRoute) => {
  let pattern = compiled.get(route);
  if (!pattern) {
    const source = route.path
      .split('/')
      .map((segment) => (/^\{.+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    pattern = new RegExp(`^${source}$`);
    compiled.set(route, pattern);
  }
  return pattern;
};

/** The declared route a request matches (its method and raw URL), or undefined. */
export function matchGateway(
  registry: CapabilityRegistry,
  method: string,
  url: string,
): GatewayMatch | undefined {
  const [, capabilityName, rest = ''] = /^\/([a-z][a-z0-9_]{1,31})(\/v1\/.*)$/.exec(url) ?? [];
  if (!capabilityName) return undefined;
  const capability = registry.get(capabilityName);
  if (!capability?.gateway) return undefined;
  const queryAt = rest.indexOf('?');
  const path = queryAt === -1 ? rest : rest.slice(0, queryAt);
  if (!isExactPath(path)) return undefined;
  const route = capability.gateway.routes.find((r) => r.method === method && patternOf(r).test(path));
  return route && { capability: capabilityName, upstream: capability.gateway.upstream, route, target: rest };
}
