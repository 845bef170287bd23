// The security set on every route (test/helpers/routes.ts): no key, a wrong key, a malformed key, a
// revoked key, a missing scope, another project's id.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SCOPES } from '../src/keys/scopes.ts';
import { keyService } from '../src/keys/service.ts';
import { expectProblem, startService } from './helpers/app.ts';
import { ROUTES } from './helpers/routes.ts';

const service = await startService({ resolve: async () => ['93.184.216.34'] });
const owner = await service.tenant();
const revoked = await service.tenant();
await keyService(service.db).revoke(revoked.keyId);

// A resource owned by `owner`, for the routes with an id.
const endpoint = await service.request('POST', '/core/v1/webhook-endpoints', {
  key: owner.key,
  body: { url: 'https://hooks.example.com/', eventTypes: ['*'] },
  headers: { 'idempotency-key': 'security-fixture' },
});
const ownedId = endpoint.body.id as string;
const event = await service.request('POST', '/core/v1/events', {
  key: owner.key,
  body: { type: 'pay.payment.succeeded', data: {} },
  headers: { 'idempotency-key': 'security-event' },
});
const ownedEvent = event.body.eventId as string;

describe('security set', () => {
  for (const { method, path: template, scope } of ROUTES) {
    const route = { method, scope, path: template.replace('{id}', ownedId).replace('{event}', ownedEvent) };
    describe(`${route.method} ${template}`, () => {
      test('no key → 401 API_KEY_MISSING', async () => {
        expectProblem(await service.request(route.method, route.path), 401, 'API_KEY_MISSING');
      });
      test('an empty key → 401 API_KEY_MISSING', async () => {
        expectProblem(await service.request(route.method, route.path, { key: '' }), 401, 'API_KEY_MISSING');
      });
      test('a well-formed unknown key → 401 API_KEY_INVALID', async () => {
        const key = `pk_test_${'A'.repeat(32)}`;
        expectProblem(await service.request(route.method, route.path, { key }), 401, 'API_KEY_INVALID');
      });
      test('a malformed key → 401 API_KEY_INVALID', async () => {
        for (const key of ['nope', `${owner.key}x`, owner.key.replace('pk_test_', 'pk_live_'), 'pk_test_é']) {
          expectProblem(await service.request(route.method, route.path, { key }), 401, 'API_KEY_INVALID');
        }
      });
      test('a revoked key → 401 API_KEY_REVOKED', async () => {
        expectProblem(
          await service.request(route.method, route.path, { key: revoked.key }),
          401,
          'API_KEY_REVOKED',
        );
      });
      if (/\{(id|event)\}/.test(template)) {
        test('another project’s id → 404 NOT_FOUND, as for an id that exists nowhere', async () => {
          const stranger = await service.tenant();
          const response = await service.request(route.method, route.path, {
            key: stranger.key,
            headers: { 'idempotency-key': `stranger-${route.method}-${template}` },
          });
          expectProblem(response, 404, 'NOT_FOUND');
          const nowhere = await service.request(
            route.method,
            template.replace(/\{(id|event)\}/, '00000000-0000-4000-8000-000000000000'),
            {
              key: stranger.key,
              headers: { 'idempotency-key': `nowhere-${route.method}-${template}` },
            },
          );
          assert.deepEqual({ ...response.body, requestId: '' }, { ...nowhere.body, requestId: '' });
        });
      }
      if (route.scope) {
        const scope = route.scope;
        test(`a key without ${scope} → 403 INSUFFICIENT_SCOPE naming it`, async () => {
          const other = await service.tenant(SCOPES.filter((s) => s !== scope));
          const response = await service.request(route.method, route.path, { key: other.key });
          expectProblem(response, 403, 'INSUFFICIENT_SCOPE');
          assert.equal(response.body.requiredScope, scope);
        });
        test(`a key with only ${scope} passes authentication and scope`, async () => {
          const other = await service.tenant([scope]);
          const response = await service.request(route.method, route.path, { key: other.key });
          assert.ok(![401, 403].includes(response.status), `${response.status} ${response.text}`);
        });
      } else {
        test('a key with no scope at all passes', async () => {
          const other = await service.tenant([]);
          const response = await service.request(route.method, route.path, { key: other.key });
          assert.equal(response.status, 200, response.text);
        });
      }
    });
  }
});
