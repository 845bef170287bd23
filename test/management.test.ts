// The management plane through HTTP (operator keys, /admin/v1): projects with their themes and languages,
// their keys, their limits, and the audit log every change writes in its own transaction.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectProblem, startService, TEST_ENCRYPTION_KEY, type Tenant } from './helpers/app.ts';
import { startProcess } from './helpers/process.ts';

const service = await startService({ env: { PLATFORM_RATE_LIMIT_PER_SECOND: '0' } });
const operator = await service.operator();
let n = 0;
const idem = () => ({ 'idempotency-key': `m-${++n}` });
const admin = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  service.request(method, `/admin/v1${path}`, {
    key: operator.key,
    body,
    headers: { ...idem(), ...headers },
  });
const createProject = async (slug: string, extra: Record<string, unknown> = {}) => {
  const response = await admin('POST', '/projects', { slug, name: `Project ${slug}`, ...extra });
  assert.equal(response.status, 201, response.text);
  return response.body;
};
const auditOf = async (query: string) => (await admin('GET', `/audit?${query}`)).body.data;

describe('projects', () => {
  test('create → 201 Project with its theme and canonical languages; a slug in use → 409 SLUG_TAKEN', async () => {
    const project = await createProject('acme', {
      mode: 'live',
      languages: ['fr', 'en-us'],
      theme: { primary: '#112233', logoUrl: 'https://cdn.example.com/acme.svg' },
    });
    assert.deepEqual(Object.keys(project).sort(), [
      'createdAt',
      'id',
      'languages',
      'mode',
      'name',
      'portalFrameAncestors',
      'retentionDays',
      'slug',
      'theme',
      'updatedAt',
    ]);
    assert.deepEqual(project.languages, ['fr', 'en-US']);
    assert.deepEqual(project.theme, {
      logoUrl: 'https://cdn.example.com/acme.svg',
      primary: '#112233',
      accent: '#8250DF',
      background: '#FFFFFF',
      text: '#1F2328',
    });
    assert.equal(project.retentionDays, null);
    assert.deepEqual(project.portalFrameAncestors, []);
    expectProblem(await admin('POST', '/projects', { slug: 'acme', name: 'Again' }), 409, 'SLUG_TAKEN');
    assert.deepEqual((await admin('GET', `/projects/${project.id}`)).body, project);
    expectProblem(await admin('GET', '/projects/00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
  });

  test('20 concurrent creates of one slug make one project', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => admin('POST', '/projects', { slug: 'race', name: 'Race' })),
    );
    assert.equal(answers.filter((a) => a.status === 201).length, 1);
    for (const answer of answers.filter((a) => a.status !== 201)) expectProblem(answer, 409, 'SLUG_TAKEN');
    const { rows } = await service.db.query(`select count(*)::int as n from projects where slug = 'race'`);
    assert.equal(rows[0]?.n, 1);
    assert.equal(
      (await auditOf('action=project.created')).filter(
        (e: any) => e.target.id === answers.find((a) => a.status === 201)?.body.id,
      ).length,
      1,
    );
  });

  test('validation: languages, colours, the logo, retention, frame ancestors; slug, mode and id never change', async () => {
    const { id } = await createProject('strict');
    const refusals: [unknown, string][] = [
      [{ languages: [] }, '/languages'],
      [{ languages: ['en', 'EN'] }, '/languages'],
      [{ languages: ['not a tag'] }, '/languages/0'],
      [
        { languages: Array.from({ length: 21 }, (_, i) => `x${String.fromCharCode(97 + (i % 26))}${i}`) },
        '/languages',
      ],
      [{ theme: { primary: 'red' } }, '/theme/primary'],
      [{ theme: { accent: null } }, '/theme/accent'],
      [{ theme: { logoUrl: 'http://cdn.example.com/logo.png' } }, '/theme/logoUrl'],
      [{ theme: { logoUrl: `https://cdn.example.com/${'a'.repeat(2048)}` } }, '/theme/logoUrl'],
      [{ retentionDays: 0 }, '/retentionDays'],
      [{ retentionDays: 401 }, '/retentionDays'],
      [{ portalFrameAncestors: ['http://app.example.com'] }, '/portalFrameAncestors/0'],
      [{ portalFrameAncestors: ['https://app.example.com/path'] }, '/portalFrameAncestors/0'],
      // A character a CSP source cannot hold would end the portal's policy early.
      [
        { portalFrameAncestors: ["https://a.example.com;script-src'unsafe-inline'"] },
        '/portalFrameAncestors/0',
      ],
      [{ portalFrameAncestors: ['https://a.example.com,b'] }, '/portalFrameAncestors/0'],
      [{ portalFrameAncestors: ["https://a'b.example.com"] }, '/portalFrameAncestors/0'],
      [{ portalFrameAncestors: ['https://exa_mple.com'] }, '/portalFrameAncestors/0'],
      [{ slug: 'other' }, '/slug'],
      [{ mode: 'live' }, '/mode'],
      [{ id }, '/id'],
      [{ name: '' }, '/name'],
    ];
    for (const [patch, pointer] of refusals) {
      const response = await admin('PATCH', `/projects/${id}`, patch);
      expectProblem(response, 400, 'VALIDATION_FAILED');
      assert.ok(
        response.body.errors.some((e: { pointer: string }) => e.pointer === pointer),
        `${JSON.stringify(patch)}: ${response.text}`,
      );
    }
    const unchanged = (await admin('GET', `/projects/${id}`)).body;
    assert.equal(unchanged.updatedAt, unchanged.createdAt);
    assert.deepEqual(
      await auditOf(`projectId=${id}&action=project.updated`),
      [],
      'a refused write is not audited',
    );
  });

  test('PATCH is a JSON merge patch: theme fields one by one, null resets, both content types', async () => {
    const { id } = await createProject('patched', { theme: { logoUrl: 'https://cdn.example.com/l.png' } });
    const first = await admin(
      'PATCH',
      `/projects/${id}`,
      { theme: { accent: '#ABCDEF' }, languages: ['pt-br', 'en'], retentionDays: 7 },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.theme.accent, '#ABCDEF');
    assert.equal(first.body.theme.primary, '#1F6FEB', 'other theme fields unchanged');
    assert.equal(first.body.theme.logoUrl, 'https://cdn.example.com/l.png');
    assert.deepEqual(first.body.languages, ['pt-BR', 'en']);
    assert.equal(first.body.retentionDays, 7);
    const second = await admin('PATCH', `/projects/${id}`, {
      theme: { logoUrl: null },
      retentionDays: null,
      portalFrameAncestors: ['https://app.example.com', 'https://admin.example.com:8443'],
    });
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.theme.logoUrl, null);
    assert.equal(second.body.theme.accent, '#ABCDEF');
    assert.equal(second.body.retentionDays, null);
    assert.deepEqual(second.body.portalFrameAncestors, [
      'https://app.example.com',
      'https://admin.example.com:8443',
    ]);
    const [latest, earlier] = await auditOf(`projectId=${id}&action=project.updated`);
    assert.deepEqual(latest.fields, ['retentionDays', 'portalFrameAncestors', 'theme.logoUrl']);
    assert.deepEqual(earlier.fields, ['languages', 'retentionDays', 'theme.accent']);
  });

  test('list: oldest first, by cursor, by slug prefix', async () => {
    for (const slug of ['list-a', 'list-b', 'list-c']) await createProject(slug);
    const first = await admin('GET', '/projects?slugPrefix=list-&limit=2');
    assert.deepEqual(
      first.body.data.map((p: { slug: string }) => p.slug),
      ['list-a', 'list-b'],
    );
    const second = await admin('GET', `/projects?slugPrefix=list-&limit=2&cursor=${first.body.nextCursor}`);
    assert.deepEqual(
      second.body.data.map((p: { slug: string }) => p.slug),
      ['list-c'],
    );
    assert.equal(second.body.nextCursor, null);
    expectProblem(await admin('GET', '/projects?cursor=bogus'), 400, 'VALIDATION_FAILED');
  });

  test('a theme patch is seen by projects/me on another process within 5 s', {
    timeout: 30_000,
  }, async () => {
    const project = await createProject('themed', { languages: ['fr', 'en'] });
    const key = (await admin('POST', `/projects/${project.id}/keys`, { scopes: ['projects:read'] })).body.key;
    const other = await startProcess('serve', {
      DATABASE_URL: service.context.config.databaseUrl,
      PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      PLATFORM_LOG_LEVEL: 'warn',
    });
    const me = async () =>
      (await (
        await fetch(`${other.baseUrl}/core/v1/projects/me`, { headers: { 'x-api-key': key } })
      ).json()) as any;
    assert.equal((await me()).theme.primary, '#1F6FEB'); // cached there now
    assert.equal(
      (await admin('PATCH', `/projects/${project.id}`, { theme: { primary: '#000000' } })).status,
      200,
    );
    const changedAt = Date.now();
    let seen = await me();
    while (seen.theme.primary !== '#000000' && Date.now() - changedAt < 6000) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      seen = await me();
    }
    assert.equal(seen.theme.primary, '#000000');
    assert.ok(Date.now() - changedAt <= 5500, 'within 5 s (plus one poll)');
    assert.deepEqual(seen.languages, ['fr', 'en']);
    await other.stop();
  });
});

describe('keys of a project', () => {
  test('create (shown once), list newest first with lastUsedAt, revoke (again: the same answer)', async () => {
    const project = await createProject('keyed', { mode: 'live' });
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = await admin('POST', `/projects/${project.id}/keys`, {
      scopes: ['projects:read', 'usage:read'],
      name: 'billing backend',
      expiresAt,
    });
    assert.equal(created.status, 201, created.text);
    assert.match(created.body.key, /^pk_live_[0-9A-Za-z]{32}$/);
    assert.equal(created.body.prefix, created.body.key.slice(0, 12));
    assert.equal(created.body.name, 'billing backend');
    assert.equal(Date.parse(created.body.expiresAt), Date.parse(expiresAt));
    assert.equal(created.body.lastUsedAt, null);
    const second = await admin('POST', `/projects/${project.id}/keys`, { scopes: ['all'] });
    assert.equal(second.body.scopes.length, 6);

    assert.equal(
      (await service.request('GET', '/core/v1/projects/me', { key: created.body.key })).status,
      200,
    );
    await service.context.keyActivity.flush();
    const listed = await admin('GET', `/projects/${project.id}/keys`);
    assert.deepEqual(
      listed.body.data.map((k: { id: string }) => k.id),
      [second.body.id, created.body.id],
    );
    const used = listed.body.data[1];
    assert.ok(Math.abs(Date.parse(used.lastUsedAt) - Date.now()) < 61_000, `lastUsedAt ${used.lastUsedAt}`);
    assert.ok(!listed.text.includes(created.body.key), 'never the key');
    assert.ok(listed.body.data.every((k: object) => !('key' in k) && !('hash' in k) && !('keyHash' in k)));

    const revoked = await admin('POST', `/keys/${created.body.id}/revoke`);
    assert.equal(revoked.status, 200, revoked.text);
    assert.ok(revoked.body.revokedAt);
    const again = await admin('POST', `/keys/${created.body.id}/revoke`);
    assert.deepEqual(again.body, revoked.body, 'again: the same answer');
    assert.equal((await auditOf(`action=key.revoked&projectId=${project.id}`)).length, 1, 'nothing changed');
  });

  test('an expiry in the past → 400; an expired key → 401 API_KEY_EXPIRED', async () => {
    const project = await createProject('expiring');
    const past = await admin('POST', `/projects/${project.id}/keys`, {
      scopes: ['projects:read'],
      expiresAt: new Date(Date.now() - 1000).toISOString(),
    });
    expectProblem(past, 400, 'VALIDATION_FAILED');
    const soon = await admin('POST', `/projects/${project.id}/keys`, {
      scopes: ['projects:read'],
      expiresAt: new Date(Date.now() + 1500).toISOString(),
    });
    const me = () => service.request('GET', '/core/v1/projects/me', { key: soon.body.key });
    assert.equal((await me()).status, 200); // and cached
    await new Promise((resolve) => setTimeout(resolve, 1600));
    expectProblem(await me(), 401, 'API_KEY_EXPIRED');
  });

  test('operator keys are revoked the same way and stop working', async () => {
    const other = await service.operator(['audit:read']);
    assert.equal((await service.request('GET', '/admin/v1/audit', { key: other.key })).status, 200);
    assert.equal((await admin('POST', `/keys/${other.keyId}/revoke`)).body.projectId, null);
    const revokedAt = Date.now();
    let answer = await service.request('GET', '/admin/v1/audit', { key: other.key });
    while (answer.status === 200 && Date.now() - revokedAt < 6000) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      answer = await service.request('GET', '/admin/v1/audit', { key: other.key });
    }
    expectProblem(answer, 401, 'API_KEY_REVOKED'); // within the 5 s of the key cache
  });
});

describe('limits', () => {
  test('read (defaults and overrides, marked), set and clear; an unregistered metric → 400', async () => {
    const project = await createProject('limited');
    const limits = async () => (await admin('GET', `/projects/${project.id}/limits`)).body.data;
    assert.deepEqual(await limits(), [
      { capability: 'core', metric: 'api_requests', dailyLimit: 1000000, source: 'default' },
      { capability: 'core', metric: 'events_published', dailyLimit: 100000, source: 'default' },
    ]);
    const set = await admin('PUT', `/projects/${project.id}/limits/core/events_published`, { dailyLimit: 5 });
    assert.deepEqual(set.body, {
      capability: 'core',
      metric: 'events_published',
      dailyLimit: 5,
      source: 'project',
    });
    const setDeliveries = await admin('PUT', `/projects/${project.id}/limits/core/webhook_deliveries`, {
      dailyLimit: 9,
    });
    assert.equal(setDeliveries.status, 200);
    assert.deepEqual(
      (await limits()).map((l: any) => `${l.metric}=${l.dailyLimit}:${l.source}`),
      ['api_requests=1000000:default', 'events_published=5:project', 'webhook_deliveries=9:project'],
    );
    assert.equal((await admin('DELETE', `/projects/${project.id}/limits/core/events_published`)).status, 204);
    assert.equal((await limits())[1].source, 'default');
    const unknown = await admin('PUT', `/projects/${project.id}/limits/core/naps`, { dailyLimit: 1 });
    expectProblem(unknown, 400, 'VALIDATION_FAILED');
    assert.match(unknown.body.detail, /the metrics are core\/api_requests, core\/events_published/);
    expectProblem(
      await admin('PUT', `/projects/${project.id}/limits/billing/invoices`, { dailyLimit: 1 }),
      400,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await admin('PUT', `/projects/${project.id}/limits/core/events_published`, { dailyLimit: -1 }),
      400,
      'VALIDATION_FAILED',
    );
    const { rows } = await service.db.query('select count(*)::int as n from usage_limits where metric = $1', [
      'naps',
    ]);
    assert.equal(rows[0]?.n, 0, 'nothing stored silently');
  });
});

describe('the audit log', () => {
  test('every kind of write has its row, by its key and request, naming fields, never values', async () => {
    const project = await createProject('audited');
    const key = (await admin('POST', `/projects/${project.id}/keys`, { scopes: ['all'] })).body;
    const tenant: Tenant = { projectId: project.id, slug: 'audited', key: key.key, keyId: key.id };
    const core = (method: string, path: string, body?: unknown) =>
      service.request(method, path, { key: tenant.key, body, headers: idem() });
    const patched = await admin('PATCH', `/projects/${project.id}`, { name: 'Audited Inc' });
    await admin('PUT', `/projects/${project.id}/limits/core/api_requests`, { dailyLimit: 50 });
    await admin('DELETE', `/projects/${project.id}/limits/core/api_requests`);
    const endpoint = (
      await core('POST', '/core/v1/webhook-endpoints', { url: 'https://93.184.216.34/h', eventTypes: ['*'] })
    ).body;
    await core('POST', `/core/v1/webhook-endpoints/${endpoint.id}/rotate-secret`);
    await core('POST', `/core/v1/webhook-endpoints/${endpoint.id}/retire-previous-secret`);
    await core('DELETE', `/core/v1/webhook-endpoints/${endpoint.id}`);
    await core('POST', '/core/v1/subjects/erase', {
      subject: { type: 'email', value: 'someone@example.com' },
    });
    await admin('POST', `/keys/${key.id}/revoke`);

    const entries = await auditOf(`projectId=${project.id}&limit=100`);
    assert.deepEqual(entries.map((e: any) => e.action).reverse(), [
      'project.created',
      'key.created',
      'project.updated',
      'limit.set',
      'limit.cleared',
      'endpoint.created',
      'endpoint.secret_rotated',
      'endpoint.secret_retired',
      'endpoint.deleted',
      'subject.erased',
      'key.revoked',
    ]);
    const updated = entries.find((e: any) => e.action === 'project.updated');
    assert.deepEqual(updated.actor, { type: 'key', keyId: operator.keyId });
    assert.equal(updated.requestId, patched.headers.get('x-request-id'));
    assert.deepEqual(updated.fields, ['name']);
    assert.deepEqual(updated.target, { type: 'project', id: project.id });
    const erased = entries.find((e: any) => e.action === 'subject.erased');
    assert.deepEqual(erased.actor, { type: 'key', keyId: key.id });
    const text = JSON.stringify(entries);
    for (const secret of ['someone@example.com', 'Audited Inc', key.key, endpoint.secret])
      assert.ok(!text.includes(secret), `no value in the log: ${secret}`);
  });

  test('a write that fails leaves no row; filters and pages; rows cannot be changed', async () => {
    const before = (await auditOf('limit=100')).length;
    expectProblem(await admin('POST', '/projects', { slug: 'acme', name: 'Taken' }), 409, 'SLUG_TAKEN');
    expectProblem(
      await admin('POST', '/projects', { slug: 'ok-slug', name: 'X', languages: ['??'] }),
      400,
      'VALIDATION_FAILED',
    );
    assert.equal((await auditOf('limit=100')).length, before);

    const since = new Date().toISOString();
    await createProject('late-one');
    await createProject('late-two');
    const recent = await auditOf(`since=${since}&action=project.created`);
    assert.equal(recent.length, 2);
    const page = await admin('GET', '/audit?limit=1');
    const next = await admin('GET', `/audit?limit=1&cursor=${page.body.nextCursor}`);
    assert.notEqual(next.body.data[0].id, page.body.data[0].id);
    assert.ok(Date.parse(next.body.data[0].at) <= Date.parse(page.body.data[0].at), 'newest first');
    for (const statement of ['update audit_log set action = $1', 'delete from audit_log where action = $1'])
      await assert.rejects(service.db.query(statement, ['project.created']), /append-only/);
  });
});
