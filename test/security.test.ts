// The security set on every route (test/helpers/routes.ts): no key, a wrong key, a malformed key, a
// revoked or expired key, a missing scope, each wrong kind of key (a project's, an operator's, a
// capability's: each route takes one kind), and another project's (or capability's) id or an unknown id.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KeyKind } from '../src/keys/scopes.ts';
import { OPERATOR_SCOPES, SCOPES } from '../src/keys/scopes.ts';
import { expectProblem, startService } from './helpers/app.ts';
import {
  bodyOf,
  everyId,
  kindOf,
  pathOf,
  ROUTES,
  TEST_CAPABILITY,
  TEST_MANIFEST,
  WITH_ID,
} from './helpers/routes.ts';

const service = await startService({ resolve: async () => ['93.184.216.34'] });
const owner = await service.tenant();
const operator = await service.operator();
const revoked = await service.tenant();
const revokedOperator = await service.operator();
const expired = await service.tenant();
const expiredOperator = await service.operator();
const capability = await service.capability(TEST_CAPABILITY, { manifest: TEST_MANIFEST });
// The route list's capability reads across projects too (GET /capability/v1/projects needs the grant).
await service.db.query(`update capabilities set grants = '{projects:read}' where name = $1`, [
  TEST_CAPABILITY,
]);
await service.context.directory.refresh();
const stranger = await service.capability('routestranger', {
  manifest: { ...TEST_MANIFEST, scopes: [], eventTypes: [] },
});
const revokedCapability = await service.capability('routerevoked');
const expiredCapability = await service.capability('routeexpired');
await service.db.query('update api_keys set revoked_at = now() where id = any ($1)', [
  [revoked.keyId, revokedOperator.keyId, revokedCapability.keyId],
]);
await service.db.query(`update api_keys set expires_at = now() - interval '1 second' where id = any ($1)`, [
  [expired.keyId, expiredOperator.keyId, expiredCapability.keyId],
]);
/** A valid key, a revoked one and an expired one, of each kind. */
const KEYS: Record<KeyKind, { valid: string; revoked: string; expired: string }> = {
  project: { valid: owner.key, revoked: revoked.key, expired: expired.key },
  operator: { valid: operator.key, revoked: revokedOperator.key, expired: expiredOperator.key },
  capability: { valid: capability.key, revoked: revokedCapability.key, expired: expiredCapability.key },
};
let n = 0;
const idem = () => ({ 'idempotency-key': `security-${++n}` });

// Resources owned by `owner`, for the routes with an id.
const endpoint = await service.request('POST', '/core/v1/webhook-endpoints', {
  key: owner.key,
  body: { url: 'https://hooks.example.com/', eventTypes: ['*'] },
  headers: idem(),
});
const event = await service.request('POST', '/core/v1/events', {
  key: owner.key,
  body: { type: 'pay.payment.succeeded', data: {} },
  headers: idem(),
});
const delivery = await service.db.query('select id from deliveries where event_id = $1', [
  event.body.eventId,
]);
const job = await service.request('POST', `/core/v1/webhook-endpoints/${endpoint.body.id}/recover`, {
  key: owner.key,
  body: { states: ['dead'], since: '2026-01-01T00:00:00Z' },
  headers: idem(),
});
await service.request('PUT', '/core/v1/event-types/pay.owner.declared', {
  key: owner.key,
  body: { description: 'declared by the owner' },
  headers: idem(),
});
const portal = await service.request('POST', '/core/v1/portal-sessions', {
  key: owner.key,
  body: {},
  headers: idem(),
});
const reservation = await service.request('POST', '/capability/v1/reservations', {
  key: capability.key,
  body: { projectId: owner.projectId, metric: 'units', amount: 1 },
  headers: idem(),
});
const erasureId = await service.erasureWithTask(owner, TEST_CAPABILITY);
const ids = {
  erasure: erasureId,
  reservation: reservation.body.id,
  capability: TEST_CAPABILITY,
  id: endpoint.body.id,
  event: event.body.eventId,
  project: owner.projectId,
  key: revoked.keyId,
  delivery: delivery.rows[0]?.id,
  job: job.body.jobId,
  name: 'pay.owner.declared',
  session: portal.body.id,
};
const NOWHERE = '00000000-0000-4000-8000-000000000000';

describe('security set', () => {
  for (const route of ROUTES) {
    const path = pathOf(route, ids);
    const kind = kindOf(route);
    const call = (key: string | undefined, at = path) =>
      service.request(route.method, at, { key, body: bodyOf(route, ids), headers: idem() });
    describe(`${route.method} ${route.path}`, () => {
      test('no key → 401 API_KEY_MISSING; an empty one too', async () => {
        expectProblem(await call(undefined), 401, 'API_KEY_MISSING');
        expectProblem(await call(''), 401, 'API_KEY_MISSING');
      });
      test('a well-formed unknown key, or a malformed one → 401 API_KEY_INVALID', async () => {
        const keys = [
          `pk_test_${'A'.repeat(32)}`,
          `pk_op_${'A'.repeat(32)}`,
          `pk_cap_${'A'.repeat(32)}`,
          'nope',
          `${owner.key}x`,
          'pk_test_é',
        ];
        keys.push(owner.key.replace('pk_test_', 'pk_live_'), operator.key.replace('pk_op_', 'pk_test_'));
        for (const key of keys) expectProblem(await call(key), 401, 'API_KEY_INVALID');
      });
      test('a revoked key → 401 API_KEY_REVOKED; an expired one → 401 API_KEY_EXPIRED', async () => {
        expectProblem(await call(KEYS[kind].revoked), 401, 'API_KEY_REVOKED');
        expectProblem(await call(KEYS[kind].expired), 401, 'API_KEY_EXPIRED');
      });
      if (route.scope) {
        const scope = route.scope;
        test(`each wrong kind of key, with every scope of its kind → 403 naming both kinds`, async () => {
          for (const other of (['project', 'operator', 'capability'] as const).filter((k) => k !== kind)) {
            const response = await call(KEYS[other].valid);
            expectProblem(response, 403, 'INSUFFICIENT_SCOPE');
            assert.equal(response.body.requiredScope, scope);
            assert.match(
              response.body.detail,
              new RegExp(
                `takes an? ${kind === 'operator' ? 'operator' : kind}.*this is an? ${other === 'operator' ? 'operator' : other}`,
              ),
            );
          }
        });
        if (kind !== 'capability') {
          // A capability's key holds its one scope: it cannot lack it.
          test(`a key without ${scope} → 403 INSUFFICIENT_SCOPE naming it`, async () => {
            const other =
              kind === 'operator'
                ? await service.operator(OPERATOR_SCOPES.filter((s) => s !== scope))
                : await service.tenant(SCOPES.filter((s) => s !== scope));
            const response = await call(other.key);
            expectProblem(response, 403, 'INSUFFICIENT_SCOPE');
            assert.equal(response.body.requiredScope, scope);
            assert.match(response.body.detail, new RegExp(`needs the scope ${scope}`));
          });
          test(`a key with only ${scope} passes authentication and scope`, async () => {
            const other =
              kind === 'operator'
                ? await service.operator([scope as (typeof OPERATOR_SCOPES)[number]])
                : await service.tenant([scope as (typeof SCOPES)[number]]);
            const response = await call(other.key);
            assert.ok(![401, 403].includes(response.status), `${response.status} ${response.text}`);
          });
        }
      } else {
        test('a key with no scope at all passes, of any kind', async () => {
          assert.equal((await call((await service.tenant([])).key)).status, 200);
          assert.equal((await call((await service.operator([])).key)).status, 200);
          assert.equal((await call(capability.key)).status, 200);
        });
      }
      if (WITH_ID.includes(route)) {
        test(
          kind === 'operator'
            ? 'an unknown id → 404 NOT_FOUND'
            : `another ${kind}’s id → 404, as an id that exists nowhere`,
          async () => {
            const nowhere = pathOf(route, {
              ...everyId(NOWHERE),
              name: 'nowhere.at.all',
              capability: 'nowhere',
            });
            if (kind === 'operator')
              return expectProblem(await call(operator.key, nowhere), 404, 'NOT_FOUND');
            const otherKey = kind === 'capability' ? stranger.key : (await service.tenant()).key;
            if (kind === 'capability' && !/\{(reservation|erasure)\}/.test(route.path)) {
              // A capability acts for every project: only an id that exists nowhere is unknown to it.
              return expectProblem(await call(otherKey, nowhere), 404, 'NOT_FOUND');
            }
            const response = await call(otherKey);
            expectProblem(response, 404, 'NOT_FOUND');
            const elsewhere = await call(otherKey, nowhere);
            assert.deepEqual({ ...response.body, requestId: '' }, { ...elsewhere.body, requestId: '' });
          },
        );
      }
    });
  }
});
