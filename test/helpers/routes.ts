// ROUTES is the single list of authenticated routes the tests hold to the contract: a route added to the
// API is added here, and the security set, the bad-input set and the path-id set run on it.
import type { Scope } from '../../src/keys/scopes.ts';

export interface Route {
  method: string;
  /** `{id}` stands for an endpoint of the key's project, `{event}` for one of its events */
  path: string;
  /** the scope it needs; undefined = any valid key */
  scope?: Scope;
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
];

/** Routes that take a body. */
export const WITH_BODY = ROUTES.filter((route) => route.body !== undefined);

/** Routes with an id in their path. */
export const WITH_ID = ROUTES.filter((route) => /\{(id|event)\}/.test(route.path));

/** The route's path with ids put in. */
export const pathOf = (route: Route, ids: { id?: string; event?: string }) =>
  route.path.replace('{id}', ids.id ?? '').replace('{event}', ids.event ?? '');
