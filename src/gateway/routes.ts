// The routes the gateway serves (docs/capabilities.md): a capability's manifest declares them, served at
// `/<capability><path>` and forwarded to `<upstream><path>`. A request's path is matched as received:
// one that would leave `/<capability>/v1/` once normalised (dot segments, encoded slashes or dots) matches
// nothing, so it is a 404 like any path no route declares.
import type { CapabilityRegistry, GatewayRoute } from '../registry.ts';

export interface GatewayMatch {
  capability: string;
  upstream: string;
  route: GatewayRoute;
  /** the path after `/<capability>` and the query string, as received (still encoded) */
  target: string;
}

/** Segments that normalise into something else: `.`, `..`, or an encoded slash, backslash or dot. */
const UNSAFE = /(^|\/)\.{1,2}(\/|$)|%2f|%5c|%2e/i;

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
  if (UNSAFE.test(path)) return undefined;
  const route = capability.gateway.routes.find((r) => r.method === method && patternOf(r).test(path));
  return route && { capability: capabilityName, upstream: capability.gateway.upstream, route, target: rest };
}
