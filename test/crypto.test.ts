import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { loadConfig } from '../src/lib/config.ts';
import { loadKeyring, parseKeyring, seal, sealedKeyId, unseal } from '../src/lib/crypto.ts';
import { ConfigError } from '../src/lib/errors.ts';
import { randomPooled } from '../src/lib/random.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'pck-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const key = () => randomBytes(32).toString('base64');

describe('master keyring', () => {
  test('unset outside prod: a key is generated once into the data directory, owner-only, with a warning', () => {
    const warnings: string[] = [];
    const first = loadKeyring({ env: 'local', configured: undefined, dataDir: dir }, (m) => warnings.push(m));
    const second = loadKeyring({ env: 'local', configured: undefined, dataDir: dir }, (m) =>
      warnings.push(m),
    );
    assert.equal(first.primary.id, second.primary.id);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /PLATFORM_ENCRYPTION_KEY is unset/);
    assert.equal(statSync(path.join(dir, 'encryption.key')).mode & 0o777, 0o600);
  });

  test('required in prod', () => {
    assert.throws(
      () => loadKeyring({ env: 'prod', configured: undefined, dataDir: dir }, () => {}),
      ConfigError,
    );
    assert.throws(() => parseKeyring('dG9vLXNob3J0'), /32 bytes/);
  });

  test('rotation: a value sealed under the old key opens once the new key is put first', () => {
    const oldKey = key();
    const newKey = key();
    const before = parseKeyring(oldKey);
    const sealed = seal(before, Buffer.from('whsec_x'), 'ctx');
    const rotated = parseKeyring(`${newKey},${oldKey}`);
    assert.equal(sealedKeyId(sealed), before.primary.id);
    assert.equal(unseal(rotated, sealed, 'ctx').toString(), 'whsec_x');
    assert.equal(sealedKeyId(seal(rotated, Buffer.from('y'), 'ctx')), rotated.primary.id);
    assert.throws(() => unseal(parseKeyring(newKey), sealed, 'ctx'), /no longer holds/);
    assert.throws(() => unseal(rotated, sealed, 'another-context'));
  });

  test('private webhook targets are refused in prod', () => {
    assert.throws(
      () => loadConfig({ PLATFORM_ENV: 'prod', PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1' }),
      ConfigError,
    );
    assert.equal(
      loadConfig({ PLATFORM_ENV: 'dev', PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1' }).webhookAllowPrivate,
      true,
    );
  });
});

describe('random bytes from a pool', () => {
  test('each draw is new: no two IVs of 10,000 seals alike, across many refills of the pool', () => {
    const keyring = parseKeyring(key());
    const ivs = new Set<string>();
    for (let i = 0; i < 10_000; i++)
      ivs.add(seal(keyring, Buffer.from('x'), 'ctx').subarray(5, 17).toString('hex'));
    assert.equal(ivs.size, 10_000);
  });

  test('a draw is a copy of its own, of the size asked, larger than the pool too', () => {
    const first = randomPooled(32);
    first.fill(7);
    const second = randomPooled(32);
    assert.equal(second.length, 32);
    assert.notDeepEqual(second, Buffer.alloc(32, 7));
    assert.notDeepEqual(second, Buffer.alloc(32)); // not the wiped bytes
    const large = randomPooled(10_000);
    assert.equal(large.length, 10_000);
    assert.ok(new Set(large).size > 200, 'the bytes of a large draw spread over the byte values');
  });
});
