// The key cache with a controllable clock: 5 s freshness, shared lookups, and the outage grace.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PlatformError } from '../src/errors.ts';
import { KEY_CACHE_TTL_MS, keyCache } from '../src/keys/cache.ts';
import type { KeyCheck } from '../src/keys/service.ts';

const valid: KeyCheck = {
  kind: 'valid',
  principal: {
    keyId: 'k',
    kind: 'project',
    scopes: new Set(),
    project: {} as never,
    capability: null,
    expiresAt: null,
  },
};
const outage = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

function harness() {
  let now = 1_000_000;
  let answer: KeyCheck | Error = valid;
  let lookups = 0;
  const cache = keyCache(
    async () => {
      lookups++;
      await new Promise((resolve) => setImmediate(resolve));
      if (answer instanceof Error) throw answer;
      return answer;
    },
    () => now,
  );
  return {
    check: (key: string) => cache.check(key),
    fresh: (key: string) => cache.fresh(key),
    advance: (ms: number) => {
      now += ms;
    },
    answer: (next: KeyCheck | Error) => {
      answer = next;
    },
    lookups: () => lookups,
  };
}

describe('key cache', () => {
  test('a revocation is seen once the 5 s freshness passes', async () => {
    const h = harness();
    assert.equal((await h.check('pk')).kind, 'valid');
    h.answer({ kind: 'revoked' });
    h.advance(KEY_CACHE_TTL_MS - 1);
    assert.equal((await h.check('pk')).kind, 'valid');
    h.advance(1);
    assert.equal((await h.check('pk')).kind, 'revoked');
  });

  test('a fresh entry answers without a promise; a stale one does not', async () => {
    const h = harness();
    assert.equal(h.fresh('pk'), undefined);
    await h.check('pk');
    assert.equal(h.fresh('pk')?.kind, 'valid');
    h.advance(KEY_CACHE_TTL_MS);
    assert.equal(h.fresh('pk'), undefined);
  });

  test('concurrent checks of one key share one lookup', async () => {
    const h = harness();
    await Promise.all(Array.from({ length: 50 }, () => h.check('pk')));
    assert.equal(h.lookups(), 1);
  });

  test('during an outage a key verified in the last 10 minutes passes; others get 503', async () => {
    const h = harness();
    await h.check('seen');
    h.answer(outage);
    h.advance(9 * 60_000);
    assert.equal((await h.check('seen')).kind, 'valid');
    await assert.rejects(
      h.check('unseen'),
      (e) => e instanceof PlatformError && e.code === 'SERVICE_UNAVAILABLE',
    );
    h.advance(2 * 60_000);
    await assert.rejects(
      h.check('seen'),
      (e) => e instanceof PlatformError && e.code === 'SERVICE_UNAVAILABLE',
    );
  });

  test('a fault that is not an outage is not hidden', async () => {
    const h = harness();
    h.answer(new Error('syntax error'));
    await assert.rejects(h.check('pk'), /syntax error/);
  });
});
