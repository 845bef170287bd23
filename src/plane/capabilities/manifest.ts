// A capability's manifest: what it declares to the platform (docs/capabilities.md). Its shape is checked by
// the route's schema (schema.ts); its rules here: names under the capability's own, a route's scope and
// metric declared by the same manifest, push erasure and a gateway only where the operator gave the
// capability an address, schemas of event types bounded and compiled as the catalogue's are.
import type { TenantSchemas } from '../../catalogue/validation.ts';
import { type FieldError, PlatformError } from '../../lib/errors.ts';

export const GATEWAY_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export interface Manifest {
  description: string;
  scopes: { name: string; description: string }[];
  metrics: { name: string; description: string; unit?: string; defaultDailyLimit?: number }[];
  eventTypes: { name: string; description: string; schema?: object | null; example?: object | null }[];
  providers: { name: string; description?: string }[];
  erasure: { mode: 'push'; timeoutSeconds?: number } | { mode: 'pull' } | null;
  gateway: {
    routes: {
      method: (typeof GATEWAY_METHODS)[number];
      path: string;
      scope: string;
      idempotent: boolean;
      metric?: string;
    }[];
  } | null;
}

/** Where the operator sends the capability's traffic; the manifest cannot change it. */
export interface Addresses {
  upstream: string | null;
  erasureUrl: string | null;
}

/** A gateway route's path: under /v1/, segments of URL-safe characters or `{name}` parameters. */
const ROUTE_PATH = /^\/v1(\/([A-Za-z0-9._~-]+|\{[a-z][a-zA-Z0-9_]*\}))+$/;

/** Checks a manifest's rules; a 400 with a pointer for each problem. */
export async function checkManifest(
  capability: string,
  manifest: Manifest,
  addresses: Addresses,
  schemas: TenantSchemas,
): Promise<void> {
  const problems: FieldError[] = [];
  const refuse = (pointer: string, detail: string) => problems.push({ pointer, detail });
  const distinct = (list: { name: string }[], at: string) => {
    const seen = new Set<string>();
    for (const [i, { name }] of list.entries()) {
      if (seen.has(name)) refuse(`/${at}/${i}/name`, `${name} is declared twice`);
      seen.add(name);
    }
  };
  for (const [i, scope] of manifest.scopes.entries()) {
    if (!scope.name.startsWith(`${capability}:`))
      refuse(`/scopes/${i}/name`, `a scope of ${capability} is named ${capability}:…`);
  }
  for (const [i, type] of manifest.eventTypes.entries()) {
    if (!type.name.startsWith(`${capability}.`))
      refuse(`/eventTypes/${i}/name`, `an event type of ${capability} is named ${capability}.…`);
  }
  distinct(manifest.scopes, 'scopes');
  distinct(manifest.metrics, 'metrics');
  distinct(manifest.eventTypes, 'eventTypes');
  distinct(manifest.providers, 'providers');
  if (manifest.erasure?.mode === 'push' && !addresses.erasureUrl)
    refuse('/erasure', 'push erasure needs an erasure URL, which an operator sets on the capability');
  if (manifest.gateway) {
    if (!addresses.upstream) refuse('/gateway', 'a gateway needs an upstream, which an operator sets');
    checkRoutes(manifest, refuse);
  }
  if (problems.length > 0) {
    throw new PlatformError('VALIDATION_FAILED', 'the manifest breaks its rules', { errors: problems });
  }
  for (const [i, type] of manifest.eventTypes.entries()) {
    if (!type.schema) continue;
    const text = await schemas.declare(type.schema, `/eventTypes/${i}/schema`);
    if (type.example) {
      await schemas.check(
        text,
        JSON.stringify(type.example),
        `/eventTypes/${i}/example`,
        'the example',
        true,
      );
    }
  }
}

function checkRoutes(manifest: Manifest, refuse: (pointer: string, detail: string) => void) {
  const scopes = new Set(manifest.scopes.map((s) => s.name));
  const metrics = new Set(manifest.metrics.map((m) => m.name));
  const seen = new Set<string>();
  for (const [i, route] of (manifest.gateway?.routes ?? []).entries()) {
    const at = `/gateway/routes/${i}`;
    if (!ROUTE_PATH.test(route.path) || route.path.split('/').some((segment) => /^\.+$/.test(segment)))
      refuse(`${at}/path`, 'a path starts with /v1/ and holds segments (not . or ..) or {name} parameters');
    if (!scopes.has(route.scope))
      refuse(`${at}/scope`, `${route.scope} is not a scope this manifest declares`);
    if (route.metric !== undefined && !metrics.has(route.metric))
      refuse(`${at}/metric`, `${route.metric} is not a metric this manifest declares`);
    // Two routes that match the same requests: which one applies would depend on their order.
    const shape = `${route.method} ${route.path.replace(/\{[^}]+\}/g, '{}')}`;
    if (seen.has(shape)) refuse(`${at}/path`, `another route already takes ${route.method} ${route.path}`);
    seen.add(shape);
  }
}
