// ROUTES is the single list of authenticated routes the tests hold to the contract: a route added to the
// API is added here, and the security set, the bad-input set and the path-id set run on it.
import type { CAPABILITY_SCOPE, KeyKind, OperatorScope, Scope } from '../../src/keys/scopes.ts';
import { isOperatorScope } from '../../src/keys/scopes.ts';

export interface Route {
  method: string;
  /**
   * `{id}` stands for an endpoint of the key's project, `{event}` for one of its events, `{delivery}` for
   * one of its deliveries, `{job}` for one of its jobs, `{name}` for an event type it declared,
   * `{session}` for one of its portal sessions; on /admin
   * routes `{project}` for a project and `{key}` for a key, `{capability}` for a capability; on
   * /capability routes `{project}` for a project, `{reservation}` for one of the capability's
   * reservations and `{erasure}` for an erasure it has a task of; elsewhere `{erasure}` is one of the
   * key's project's erasures
   */
  path: string;
  /** the scope it needs; undefined = any valid key */
  scope?: Scope | OperatorScope | typeof CAPABILITY_SCOPE;
  /** a valid body, for the routes that take one (a function of the ids, where it names one) */
  body?: unknown;
}

/** The capability the route lists register (with TEST_MANIFEST) for the capability routes. */
export const TEST_CAPABILITY = 'routelist';

/** A manifest for the capability routes: a scope, a metric, an event type, a provider. */
export const TEST_MANIFEST = {
  description: 'The capability the route list uses',
  scopes: [{ name: 'routelist:use', description: 'Use it' }],
  metrics: [{ name: 'units', description: 'Units used', defaultDailyLimit: 1000 }],
  eventTypes: [{ name: 'routelist.thing.done', description: 'A thing was done' }],
  providers: [{ name: 'upstream-provider' }],
  erasure: null,
  gateway: null,
};

export const ROUTES: Route[] = [
  { method: 'GET', path: '/api/health' },
  { method: 'GET', path: '/core/v1/projects/me', scope: 'projects:read' },
  { method: 'GET', path: '/core/v1/usage', scope: 'usage:read' },
  {
    method: 'POST',
    path: '/core/v1/subjects/erase',
    scope: 'subjects:erase',
    body: { subject: { type: 'external_id', value: 'u-1' } },
  },
  { method: 'GET', path: '/core/v1/erasures/{erasure}', scope: 'subjects:erase' },
  { method: 'GET', path: '/core/v1/webhook-endpoints', scope: 'webhooks:read' },
  {
    method: 'POST',
    path: '/core/v1/webhook-endpoints',
    scope: 'webhooks:write',
    body: { url: 'https://hooks.example.com/', eventTypes: ['*'] },
  },
  { method: 'DELETE', path: '/core/v1/webhook-endpoints/{id}', scope: 'webhooks:write' },
  { method: 'POST', path: '/core/v1/webhook-endpoints/{id}/rotate-secret', scope: 'webhooks:write' },
  { method: 'POST', path: '/core/v1/webhook-endpoints/{id}/retire-previous-secret', scope: 'webhooks:write' },
  { method: 'POST', path: '/core/v1/webhook-endpoints/{id}/test', scope: 'webhooks:write' },
  { method: 'GET', path: '/core/v1/webhook-endpoints/{id}/deliveries', scope: 'webhooks:read' },
  { method: 'GET', path: '/core/v1/webhook-endpoints/{id}/stats', scope: 'webhooks:read' },
  {
    method: 'POST',
    path: '/core/v1/events',
    scope: 'events:write',
    body: { type: 'pay.payment.succeeded', data: { amount: 1 } },
  },
  { method: 'GET', path: '/core/v1/events', scope: 'webhooks:read' },
  { method: 'GET', path: '/core/v1/events/{event}', scope: 'webhooks:read' },
  { method: 'POST', path: '/core/v1/events/{event}/replay', scope: 'webhooks:write' },
  { method: 'GET', path: '/core/v1/event-types', scope: 'webhooks:read' },
  {
    method: 'PUT',
    path: '/core/v1/event-types/pay.route.listed',
    scope: 'events:write',
    body: { description: 'A type declared by the route list' },
  },
  { method: 'DELETE', path: '/core/v1/event-types/{name}', scope: 'events:write' },
  { method: 'GET', path: '/core/v1/webhook-endpoints/{id}', scope: 'webhooks:read' },
  {
    method: 'PATCH',
    path: '/core/v1/webhook-endpoints/{id}',
    scope: 'webhooks:write',
    body: { rateLimitPerSecond: 50 },
  },
  { method: 'POST', path: '/core/v1/webhook-endpoints/{id}/pause', scope: 'webhooks:write' },
  { method: 'POST', path: '/core/v1/webhook-endpoints/{id}/resume', scope: 'webhooks:write' },
  { method: 'POST', path: '/core/v1/webhook-endpoints/{id}/cancel-pending', scope: 'webhooks:write' },
  {
    method: 'POST',
    path: '/core/v1/webhook-endpoints/{id}/recover',
    scope: 'webhooks:write',
    body: { states: ['dead'], since: '2026-01-01T00:00:00Z', dryRun: true },
  },
  // Destinations (contract 0.4): {id} is an endpoint, a destination of type webhook.
  { method: 'GET', path: '/core/v1/destinations', scope: 'webhooks:read' },
  {
    method: 'POST',
    path: '/core/v1/destinations',
    scope: 'webhooks:write',
    body: { type: 'polling', target: {}, eventTypes: ['*'] },
  },
  { method: 'GET', path: '/core/v1/destinations/{id}', scope: 'webhooks:read' },
  {
    method: 'PATCH',
    path: '/core/v1/destinations/{id}',
    scope: 'webhooks:write',
    body: { rateLimitPerSecond: 50 },
  },
  { method: 'GET', path: '/core/v1/destinations/{id}/messages', scope: 'webhooks:read' },
  { method: 'GET', path: '/core/v1/destinations/{id}/deliveries', scope: 'webhooks:read' },
  { method: 'GET', path: '/core/v1/destinations/{id}/stats', scope: 'webhooks:read' },
  { method: 'POST', path: '/core/v1/destinations/{id}/pause', scope: 'webhooks:write' },
  { method: 'POST', path: '/core/v1/destinations/{id}/resume', scope: 'webhooks:write' },
  { method: 'POST', path: '/core/v1/destinations/{id}/cancel-pending', scope: 'webhooks:write' },
  { method: 'POST', path: '/core/v1/destinations/{id}/test', scope: 'webhooks:write' },
  { method: 'POST', path: '/core/v1/destinations/{id}/rotate-secret', scope: 'webhooks:write' },
  { method: 'POST', path: '/core/v1/destinations/{id}/retire-previous-secret', scope: 'webhooks:write' },
  {
    method: 'POST',
    path: '/core/v1/destinations/{id}/recover',
    scope: 'webhooks:write',
    body: { states: ['dead'], since: '2026-01-01T00:00:00Z', dryRun: true },
  },
  { method: 'DELETE', path: '/core/v1/destinations/{id}', scope: 'webhooks:write' },
  { method: 'POST', path: '/core/v1/deliveries/{delivery}/retry', scope: 'webhooks:write' },
  { method: 'GET', path: '/core/v1/jobs/{job}', scope: 'webhooks:read' },
  { method: 'POST', path: '/core/v1/portal-sessions', scope: 'webhooks:write', body: { ttlSeconds: 600 } },
  { method: 'GET', path: '/core/v1/portal-sessions', scope: 'webhooks:read' },
  { method: 'DELETE', path: '/core/v1/portal-sessions/{session}', scope: 'webhooks:write' },
  {
    method: 'POST',
    path: '/admin/v1/projects',
    scope: 'projects:manage',
    body: { slug: 'from-the-route-list', name: 'Route list' },
  },
  { method: 'GET', path: '/admin/v1/projects', scope: 'projects:manage' },
  { method: 'GET', path: '/admin/v1/projects/{project}', scope: 'projects:manage' },
  {
    method: 'PATCH',
    path: '/admin/v1/projects/{project}',
    scope: 'projects:manage',
    body: { name: 'Renamed' },
  },
  {
    method: 'POST',
    path: '/admin/v1/projects/{project}/keys',
    scope: 'keys:manage',
    body: { scopes: ['usage:read'] },
  },
  { method: 'GET', path: '/admin/v1/projects/{project}/keys', scope: 'keys:manage' },
  { method: 'POST', path: '/admin/v1/keys/{key}/revoke', scope: 'keys:manage' },
  { method: 'GET', path: '/admin/v1/projects/{project}/limits', scope: 'limits:manage' },
  {
    method: 'PUT',
    path: '/admin/v1/projects/{project}/limits/core/events_published',
    scope: 'limits:manage',
    body: { dailyLimit: 1000 },
  },
  {
    method: 'DELETE',
    path: '/admin/v1/projects/{project}/limits/core/events_published',
    scope: 'limits:manage',
  },
  { method: 'GET', path: '/admin/v1/audit', scope: 'audit:read' },
  { method: 'GET', path: '/admin/v1/projects/{project}/usage', scope: 'limits:manage' },
  {
    method: 'POST',
    path: '/admin/v1/capabilities',
    scope: 'capabilities:manage',
    body: { name: 'fromroutelist', description: 'Registered by the route list' },
  },
  { method: 'GET', path: '/admin/v1/capabilities', scope: 'capabilities:manage' },
  { method: 'GET', path: '/admin/v1/capabilities/{capability}', scope: 'capabilities:manage' },
  {
    method: 'PATCH',
    path: '/admin/v1/capabilities/{capability}',
    scope: 'capabilities:manage',
    body: { description: 'Changed by the route list' },
  },
  { method: 'POST', path: '/admin/v1/capabilities/{capability}/keys', scope: 'capabilities:manage' },
  {
    method: 'POST',
    path: '/admin/v1/capabilities/{capability}/rotate-signing-secret',
    scope: 'capabilities:manage',
  },
  {
    method: 'POST',
    path: '/admin/v1/capabilities/{capability}/retire-previous-signing-secret',
    scope: 'capabilities:manage',
  },
  { method: 'GET', path: '/capability/v1/manifest', scope: 'capability' },
  { method: 'PUT', path: '/capability/v1/manifest', scope: 'capability', body: TEST_MANIFEST },
  {
    method: 'POST',
    path: '/capability/v1/keys/verify',
    scope: 'capability',
    body: { key: `pk_test_${'B'.repeat(32)}` },
  },
  {
    method: 'POST',
    path: '/capability/v1/usage',
    scope: 'capability',
    body: (ids: Ids) => ({
      records: [
        { id: `r-${Date.now()}-${Math.random()}`, projectId: ids.project, metric: 'units', value: 1 },
      ],
    }),
  },
  { method: 'GET', path: '/capability/v1/limits/{project}/units', scope: 'capability' },
  {
    method: 'POST',
    path: '/capability/v1/reservations',
    scope: 'capability',
    body: (ids: Ids) => ({ projectId: ids.project, metric: 'units', amount: 1 }),
  },
  {
    method: 'POST',
    path: '/capability/v1/reservations/{reservation}/commit',
    scope: 'capability',
    body: { amount: 1 },
  },
  { method: 'POST', path: '/capability/v1/reservations/{reservation}/release', scope: 'capability' },
  {
    method: 'POST',
    path: '/capability/v1/events',
    scope: 'capability',
    body: (ids: Ids) => ({ projectId: ids.project, type: 'routelist.thing.done', data: {} }),
  },
  {
    method: 'PUT',
    path: '/capability/v1/breakers',
    scope: 'capability',
    body: { instance: 'route-list-1', providers: [{ provider: 'upstream-provider', state: 'closed' }] },
  },
  { method: 'GET', path: '/capability/v1/erasure-tasks', scope: 'capability' },
  // TEST_CAPABILITY is granted projects:read and usage:read by the tests that use this list.
  { method: 'GET', path: '/capability/v1/projects', scope: 'capability' },
  { method: 'GET', path: '/capability/v1/usage/changes', scope: 'capability' },
  {
    method: 'POST',
    path: '/capability/v1/erasure-tasks/{erasure}/complete',
    scope: 'capability',
    body: { erased: 0 },
  },
];

/** Routes that take a body. */
export const WITH_BODY = ROUTES.filter((route) => route.body !== undefined);

const PLACEHOLDER = /\{(id|event|project|key|delivery|job|name|session|capability|reservation|erasure)\}/g;

/** Routes with an id in their path. */
export const WITH_ID = ROUTES.filter((route) => route.path.match(PLACEHOLDER));

/** Whether the route is the management API's (operator keys). */
export const isAdmin = (route: Route) => route.path.startsWith('/admin/');

/** The kind of key a route takes. */
export const kindOf = (route: Route): KeyKind =>
  route.path.startsWith('/capability/')
    ? 'capability'
    : route.scope !== undefined && isOperatorScope(route.scope)
      ? 'operator'
      : isAdmin(route)
        ? 'operator'
        : 'project';

/** The route's body for these ids. */
export const bodyOf = (route: Route, ids: Ids): unknown =>
  typeof route.body === 'function' ? (route.body as (ids: Ids) => unknown)(ids) : route.body;

export interface Ids {
  id?: string;
  event?: string;
  project?: string;
  key?: string;
  delivery?: string;
  job?: string;
  name?: string;
  session?: string;
  capability?: string;
  reservation?: string;
  erasure?: string;
}

/** The same value for every kind of id. */
export const everyId = (id: string): Ids => ({
  id,
  event: id,
  project: id,
  key: id,
  delivery: id,
  job: id,
  name: id,
  session: id,
  capability: id,
  reservation: id,
  erasure: id,
});

/** The route's path with ids put in. */
export const pathOf = (route: Route, ids: Ids) =>
  route.path.replace(PLACEHOLDER, (_, name: keyof Ids) => ids[name] ?? '');
