// Portal sessions (docs/portal.md): minted by a key with a one-time link, exchanged by the page for
// a cookie that acts for the project with the portal's scopes (capped by the key's), writes guarded by
// the session's CSRF token, and ended by expiry, revocation, sign-out or its key's revocation.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectProblem, startService, type Tenant } from './helpers/app.ts';

const service = await startService();
let n = 0;
const idem = () => ({ 'idempotency-key': `portal-${++n}` });

async function mint(who: Tenant, body: object = {}) {
  const created = await service.request('POST', '/core/v1/portal-sessions', {
    key: who.key,
    headers: idem(),
    body,
  });
  assert.equal(created.status, 201, created.text);
  return created.body as { id: string; url: string; expiresAt: string };
}

/** The page's side: the link's code traded for the cookie and the session's description. */
async function enter(url: string) {
  const code = new URL(url).hash.replace('#code=', '');
  const exchanged = await service.request('POST', '/portal/session', { body: { code } });
  return { exchanged, cookie: (exchanged.headers.get('set-cookie') ?? '').split(';')[0] ?? '' };
}

const withCookie = (cookie: string, headers: Record<string, string> = {}) => ({
  headers: { cookie, ...headers },
});

describe('portal sessions', () => {
  test('a key mints a session: 201 with a one-time link on this service and its expiry', async () => {
    const tenant = await service.tenant();
    const before = Date.now();
    const session = await mint(tenant, { ttlSeconds: 900 });
    assert.match(session.url, new RegExp(`^${service.baseUrl}/portal/enter#code=[A-Za-z0-9_-]{43}$`));
    const lifetime = Date.parse(session.expiresAt) - before;
    assert.ok(lifetime > 890_000 && lifetime < 910_000, String(lifetime));
    const defaulted = await mint(tenant);
    assert.ok(Math.abs(Date.parse(defaulted.expiresAt) - Date.now() - 3_600_000) < 10_000);
    for (const body of [{ ttlSeconds: 299 }, { ttlSeconds: 86_401 }, { language: 'de' }, { extra: 1 }]) {
      const refused = await service.request('POST', '/core/v1/portal-sessions', {
        key: tenant.key,
        headers: idem(),
        body,
      });
      expectProblem(refused, 400, 'VALIDATION_FAILED');
    }
    const stored = await service.db.query('select code_hash, token_hash from portal_sessions where id = $1', [
      session.id,
    ]);
    assert.equal(stored.rows[0]!.code_hash.length, 32, 'the code is stored as its SHA-256 only');
    assert.equal(stored.rows[0]!.token_hash, null);
  });

  test('the code works once; the cookie is HttpOnly, SameSite=Strict, for the session’s lifetime', async () => {
    const tenant = await service.tenant();
    const session = await mint(tenant, { ttlSeconds: 600 });
    const { exchanged, cookie } = await enter(session.url);
    assert.equal(exchanged.status, 200, exchanged.text);
    assert.deepEqual(
      [exchanged.body.project.id, exchanged.body.language, exchanged.body.scopes.sort()],
      [tenant.projectId, 'en', ['projects:read', 'usage:read', 'webhooks:read', 'webhooks:write']],
    );
    const attributes = (exchanged.headers.get('set-cookie') ?? '').split('; ');
    assert.match(attributes[0] ?? '', /^platform_portal=[A-Za-z0-9_-]{43}$/);
    assert.ok(
      attributes.includes('HttpOnly') &&
        attributes.includes('SameSite=Strict') &&
        attributes.includes('Path=/'),
    );
    assert.ok(!attributes.includes('Secure'), 'not over plain HTTP');
    const maxAge = Number(attributes.find((a) => a.startsWith('Max-Age='))?.slice(8));
    assert.ok(maxAge > 590 && maxAge <= 600, String(maxAge));
    expectProblem((await enter(session.url)).exchanged, 401, 'PORTAL_SESSION_EXPIRED');
    expectProblem(
      await service.request('POST', '/portal/session', { body: { code: 'x'.repeat(43) } }),
      401,
      'PORTAL_SESSION_EXPIRED',
    );
    const again = await service.request('GET', '/portal/session', withCookie(cookie));
    assert.equal(again.body.csrfToken, exchanged.body.csrfToken);
  });

  test('the exchange takes JSON only: what a form on another site can send is refused, the code kept', async () => {
    const tenant = await service.tenant();
    const session = await mint(tenant);
    const code = new URL(session.url).hash.replace('#code=', '');
    for (const type of [
      'application/x-www-form-urlencoded',
      'text/plain',
      'multipart/form-data; boundary=x',
    ]) {
      const form = await service.request('POST', '/portal/session', {
        rawBody: `code=${code}`,
        headers: { 'content-type': type },
      });
      expectProblem(form, 415, 'UNSUPPORTED_MEDIA_TYPE');
      assert.equal(form.headers.get('set-cookie'), null);
    }
    assert.equal((await enter(session.url)).exchanged.status, 200, 'the code still works, once');
  });

  test('a late code (after 10 minutes) is refused', async () => {
    const tenant = await service.tenant();
    const session = await mint(tenant);
    await service.db.query(
      `update portal_sessions set code_expires_at = now() - interval '1 second' where id = $1`,
      [session.id],
    );
    expectProblem((await enter(session.url)).exchanged, 401, 'PORTAL_SESSION_EXPIRED');
  });

  test('the cookie acts for its project with the portal’s scopes, capped by its key’s; writes need the CSRF token', async () => {
    const tenant = await service.tenant();
    const { exchanged, cookie } = await enter((await mint(tenant)).url);
    const csrf = exchanged.body.csrfToken as string;
    const me = await service.request('GET', '/core/v1/projects/me', withCookie(cookie));
    assert.equal(me.body.id, tenant.projectId);
    const body = { url: 'https://hooks.example.com/portal', eventTypes: ['*'] };
    const unguarded = await service.request('POST', '/core/v1/webhook-endpoints', {
      body,
      ...withCookie(cookie, idem()),
    });
    expectProblem(unguarded, 403, 'CSRF_TOKEN_INVALID');
    const forged = withCookie(cookie, {
      ...idem(),
      'x-csrf-token': `${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}`,
    });
    expectProblem(
      await service.request('POST', '/core/v1/webhook-endpoints', { body, ...forged }),
      403,
      'CSRF_TOKEN_INVALID',
    );
    const guarded = withCookie(cookie, { ...idem(), 'x-csrf-token': csrf });
    const created = await service.request('POST', '/core/v1/webhook-endpoints', { body, ...guarded });
    assert.equal(created.status, 400, 'past authentication and CSRF: the address policy answers');
    expectProblem(created, 400, 'WEBHOOK_URL_NOT_ALLOWED');
    const publish = withCookie(cookie, { ...idem(), 'x-csrf-token': csrf });
    const refused = await service.request('POST', '/core/v1/events', {
      body: { type: 'pay.a.b', data: {} },
      ...publish,
    });
    expectProblem(refused, 403, 'INSUFFICIENT_SCOPE');
    for (const [method, path] of [
      ['GET', '/core/v1/portal-sessions'],
      ['GET', '/admin/v1/projects'],
    ] as const)
      expectProblem(await service.request(method, path, withCookie(cookie)), 401, 'API_KEY_MISSING');

    const reader = await service.tenant(['webhooks:write', 'webhooks:read']);
    const narrow = await enter((await mint(reader)).url);
    assert.deepEqual(narrow.exchanged.body.scopes.sort(), ['webhooks:read', 'webhooks:write']);
    expectProblem(
      await service.request('GET', '/core/v1/usage', withCookie(narrow.cookie)),
      403,
      'INSUFFICIENT_SCOPE',
    );
  });

  test('listed newest first; revoked, expired, signed out, or its key expired or revoked → 401 PORTAL_SESSION_EXPIRED', async () => {
    const tenant = await service.tenant();
    const first = await mint(tenant, { language: 'en' });
    const second = await mint(tenant);
    const listed = await service.request('GET', '/core/v1/portal-sessions?limit=1', { key: tenant.key });
    assert.deepEqual(
      listed.body.data.map((s: { id: string }) => s.id),
      [second.id],
    );
    assert.ok(listed.body.nextCursor);
    const { cookie } = await enter(first.url);
    const revoke = await service.request('DELETE', `/core/v1/portal-sessions/${first.id}`, {
      key: tenant.key,
      headers: idem(),
    });
    assert.equal(revoke.status, 204);
    expectProblem(
      await service.request('GET', '/core/v1/projects/me', withCookie(cookie)),
      401,
      'PORTAL_SESSION_EXPIRED',
    );
    expectProblem(
      await service.request('GET', '/portal/session', withCookie(cookie)),
      401,
      'PORTAL_SESSION_EXPIRED',
    );
    const page = await service.request('GET', '/core/v1/portal-sessions', { key: tenant.key });
    assert.ok(page.body.data.find((s: { id: string }) => s.id === first.id).revokedAt);

    const expiring = await enter(second.url);
    await service.db.query(
      `update portal_sessions set expires_at = now() - interval '1 second' where id = $1`,
      [second.id],
    );
    expectProblem(
      await service.request('GET', '/core/v1/projects/me', withCookie(expiring.cookie)),
      401,
      'PORTAL_SESSION_EXPIRED',
    );

    const leaving = await enter((await mint(tenant)).url);
    const unguarded = await service.request('DELETE', '/portal/session', withCookie(leaving.cookie));
    expectProblem(unguarded, 403, 'CSRF_TOKEN_INVALID');
    const csrf = { 'x-csrf-token': leaving.exchanged.body.csrfToken };
    const out = await service.request('DELETE', '/portal/session', withCookie(leaving.cookie, csrf));
    assert.equal(out.status, 204);
    assert.match(out.headers.get('set-cookie') ?? '', /^platform_portal=; Path=\/; Max-Age=0/);
    expectProblem(
      await service.request('GET', '/core/v1/projects/me', withCookie(leaving.cookie)),
      401,
      'PORTAL_SESSION_EXPIRED',
    );

    const unopened = await mint(tenant);
    await service.db.query(`update api_keys set expires_at = now() - interval '1 second' where id = $1`, [
      tenant.keyId,
    ]);
    expectProblem((await enter(unopened.url)).exchanged, 401, 'PORTAL_SESSION_EXPIRED');
    await service.db.query('update api_keys set expires_at = null where id = $1', [tenant.keyId]);
    const keyed = await enter((await mint(tenant)).url);
    await service.db.query('update api_keys set revoked_at = now() where id = $1', [tenant.keyId]);
    expectProblem(
      await service.request('GET', '/core/v1/projects/me', withCookie(keyed.cookie)),
      401,
      'PORTAL_SESSION_EXPIRED',
    );
  });

  test('minting and revoking are audited, by the key; revoking twice is one revocation', async () => {
    const tenant = await service.tenant();
    const session = await mint(tenant);
    await service.request('DELETE', `/core/v1/portal-sessions/${session.id}`, {
      key: tenant.key,
      headers: idem(),
    });
    await service.request('DELETE', `/core/v1/portal-sessions/${session.id}`, {
      key: tenant.key,
      headers: idem(),
    });
    const { rows } = await service.db.query(
      `select action, actor_key_id, target_id from audit_log
        where project_id = $1 and action like 'portal_session.%' order by at`,
      [tenant.projectId],
    );
    assert.deepEqual(
      rows.map((r) => [r.action, r.actor_key_id, r.target_id]),
      [
        ['portal_session.created', tenant.keyId, session.id],
        ['portal_session.revoked', tenant.keyId, session.id],
      ],
    );
  });
});
