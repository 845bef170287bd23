// The master keyring (PLATFORM_ENCRYPTION_KEY) and AES-256-GCM sealing of secrets at rest.
// A sealed value records the id of the key that sealed it, so the master key can be rotated: put the new
// key first in PLATFORM_ENCRYPTION_KEY and keep the old ones after it until everything is re-sealed.
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createSecretKey,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from './errors.ts';
import { randomPooled } from './random.ts';

export interface MasterKey {
  id: string; // 8 hex characters of the key's SHA-256: names the key without revealing it
  /** A KeyObject made once: passing the raw bytes makes node:crypto build one on every seal. */
  key: KeyObject;
}

export interface Keyring {
  primary: MasterKey;
  all: MasterKey[];
}

const VERSION = 1;

/** Parses "base64,base64,…" (newest first): each a 32-byte key. */
export function parseKeyring(value: string): Keyring {
  const all = value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((encoded) => {
      const key = Buffer.from(encoded, 'base64');
      if (key.length !== 32)
        throw new ConfigError('PLATFORM_ENCRYPTION_KEY must hold base64 keys of 32 bytes');
      return { id: createHash('sha256').update(key).digest('hex').slice(0, 8), key: createSecretKey(key) };
    });
  const primary = all[0];
  if (!primary) throw new ConfigError('PLATFORM_ENCRYPTION_KEY is empty');
  return { primary, all };
}

/**
 * The keyring from PLATFORM_ENCRYPTION_KEY; when unset outside prod, a key generated once into the data
 * directory (owner-only) is used instead, with a warning: fine on one machine, wrong for a fleet.
 */
export function loadKeyring(
  options: { env: string; configured: string | undefined; dataDir: string },
  warn: (message: string) => void,
): Keyring {
  if (options.configured) return parseKeyring(options.configured);
  if (options.env === 'prod')
    throw new ConfigError('PLATFORM_ENCRYPTION_KEY is required when PLATFORM_ENV=prod');
  const file = path.join(options.dataDir, 'encryption.key');
  if (!existsSync(file)) {
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    try {
      writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
      warn(`PLATFORM_ENCRYPTION_KEY is unset: generated a key into ${file}; set the variable in production`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error; // another process made it first
    }
  }
  chmodSync(file, 0o600);
  return parseKeyring(readFileSync(file, 'utf8'));
}

/** version(1) ‖ key id(4) ‖ iv(12) ‖ tag(16) ‖ ciphertext. `context` binds a value to its place (AAD). */
export function seal(keyring: Keyring, plaintext: Buffer, context: string): Buffer {
  const { id, key } = keyring.primary;
  const iv = randomPooled(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), Buffer.from(id, 'hex'), iv, cipher.getAuthTag(), ciphertext]);
}

export function unseal(keyring: Keyring, sealed: Buffer, context: string): Buffer {
  if (sealed[0] !== VERSION) throw new Error('unknown sealed-value version');
  const id = sealed.subarray(1, 5).toString('hex');
  const master = keyring.all.find((k) => k.id === id);
  if (!master) throw new Error(`sealed with master key ${id}, which PLATFORM_ENCRYPTION_KEY no longer holds`);
  const decipher = createDecipheriv('aes-256-gcm', master.key, sealed.subarray(5, 17));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(sealed.subarray(17, 33));
  return Buffer.concat([decipher.update(sealed.subarray(33)), decipher.final()]);
}

/** Which master key sealed a value (for re-sealing after a rotation). */
export const sealedKeyId = (sealed: Buffer) => sealed.subarray(1, 5).toString('hex');
