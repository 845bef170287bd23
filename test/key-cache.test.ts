// The key cache with a controllable clock: 5 s freshness, shared and batched lookups, refreshing ahead
// the keys in use, and the outage grace.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KEY_CACHE_TTL_MS, keyCache } from '../src/keys/cache.ts';
import type { KeyCheck } from '../src/keys/service.ts';
import { PlatformError } from '../src/lib/errors.ts';

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
  const asked: string[][] = [];
  const cache = keyCache(
    async (keys) => {
      lookups++;
      asked.push(keys);
      await new Promise((resolve) => setImmediate(resolve));
      if (answer instanceof Error) throw answer;
      const check = answer;
      return new Map(keys.map((key) => [key, check]));
    },
    () => now,
  );
  return {
    check: (key: string) => cache.check(key),
    fresh: (key: string) => cache.fresh(key),
    asked,
    cache,
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

  test('the misses of one turn of the event loop are one lookup', async () => {
    const h = harness();
    const checks = await Promise.all(['a', 'b', 'c', 'a'].map((key) => h.check(key)));
    assert.deepEqual(
      checks.map((c) => c.kind),
      ['valid', 'valid', 'valid', 'valid'],
    );
    assert.deepEqual(h.asked, [['a', 'b', 'c']]);
  });

  test('the keys in use are refreshed ahead, together; one not read since it was loaded is not', async () => {
    const h = harness();
    await Promise.all(['busy', 'other', 'idle'].map((key) => h.check(key)));
    h.advance(KEY_CACHE_TTL_MS - 2500);
    await h.cache.refresh(); // too young: nothing asked
    assert.equal(h.lookups(), 1);
    h.fresh('busy');
    h.fresh('other');
    h.advance(1000);
    h.answer({ kind: 'revoked' });
    await h.cache.refresh();
    assert.deepEqual(h.asked.at(-1)?.sort(), ['busy', 'other']);
    // Refreshed: its revocation is seen before the 5 s of its first load ran out, without a lookup.
    assert.equal(h.fresh('busy')?.kind, 'revoked');
    h.advance(1500);
    assert.equal(h.fresh('busy')?.kind, 'revoked');
    assert.equal(h.fresh('idle'), undefined);
    assert.equal((await h.check('idle')).kind, 'revoked');
    assert.equal(h.lookups(), 3);
  });

  test('a failed refresh changes nothing: the entry still runs out at 5 s', async () => {
    const h = harness();
    await h.check('pk');
    h.fresh('pk');
    h.advance(KEY_CACHE_TTL_MS - 1500);
    h.answer(new Error('syntax error'));
    await h.cache.refresh();
    assert.equal(h.fresh('pk')?.kind, 'valid');
    h.advance(1500);
    assert.equal(h.fresh('pk'), undefined);
  });
});
