// ROUTES is the single list of authenticated routes the tests hold to the contract: a route added to the
// API is added here, and the security set, the bad-input set and the path-id set run on it.
import type { OperatorScope, Scope } from '../../src/keys/scopes.ts';

export interface Route {
  method: string;
  /**
   * `{id}` stands for an endpoint of the key's project, `{event}` for one of its events; on /admin
   * routes `{project}` for a project and `{key}` for a key
   */
  path: string;
  /** the scope it needs; undefined = any valid key */
  scope?: Scope | OperatorScope;
  /** a valid body, for the routes that take one */
  body?: unknown;
}

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
  {
    method: 'POST',
    path: '/core/v1/events',
    scope: 'events:write',
    body: { type: 'pay.payment.succeeded', data: { amount: 1 } },
  },
  { method: 'GET', path: '/core/v1/events/{event}', scope: 'webhooks:read' },
  { method: 'POST', path: '/core/v1/events/{event}/replay', scope: 'webhooks:write' },
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
];

/** Routes that take a body. */
export const WITH_BODY = ROUTES.filter((route) => route.body !== undefined);

/** Routes with an id in their path. */
export const WITH_ID = ROUTES.filter((route) => /\{(id|event|project|key)\}/.test(route.path));

/** Whether the route is the management API's (operator keys). */
export const isAdmin = (route: Route) => route.path.startsWith('/admin/');

export interface Ids {
  id?: string;
  event?: string;
  project?: string;
  key?: string;
}

/** The route's path with ids put in. */
export const pathOf = (route: Route, ids: Ids) =>
  route.path.replace(/\{(id|event|project|key)\}/g, (_, name: keyof Ids) => ids[name] ?? '');
