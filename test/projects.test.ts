import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startService } from './helpers/app.ts';

const service = await startService();

describe('GET /core/v1/projects/me', () => {
  test('200 with the key’s own project, theme and languages', async () => {
    const a = await service.tenant();
    const b = await service.tenant(['projects:read'], 'live');
    const meA = await service.request('GET', '/core/v1/projects/me', { key: a.key });
    const meB = await service.request('GET', '/core/v1/projects/me', { key: b.key });
    assert.equal(meA.status, 200);
    assert.deepEqual(meA.body, {
      id: a.projectId,
      slug: a.slug,
      name: `Project ${a.slug}`,
      mode: 'test',
      languages: ['en'],
      theme: { logoUrl: null, primary: '#1F6FEB', accent: '#8250DF', background: '#FFFFFF', text: '#1F2328' },
    });
    assert.equal(meB.body.id, b.projectId);
    assert.equal(meB.body.mode, 'live');
    assert.match(b.key, /^pk_live_[0-9A-Za-z]{32}$/);
    assert.match(a.key, /^pk_test_[0-9A-Za-z]{32}$/);
  });

  test('the key is stored only as its SHA-256', async () => {
    const tenant = await service.tenant();
    const { rows } = await service.db.query(`select * from api_keys where id = $1`, [tenant.keyId]);
    const row = rows[0] as { key_hash: Buffer; display_prefix: string };
    const stored = JSON.stringify(row);
    assert.ok(!stored.includes(tenant.key.slice(8)), 'the key appears in clear');
    const { createHash } = await import('node:crypto');
    assert.deepEqual(row.key_hash, createHash('sha256').update(tenant.key).digest());
    assert.equal(row.display_prefix, tenant.key.slice(0, 12));
  });
});
