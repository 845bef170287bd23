// API keys: `pk_<mode>_` + 32 base62 characters (~190 bits). Only the SHA-256 of the whole key is stored,
// with a short display prefix for operators; the key itself is shown once, at creation.
import { createHash, randomInt } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { type ProjectMe, toProjectMe } from '../projects/store.ts';
import type { Scope } from './scopes.ts';
import { keyStore } from './store.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32;
const KEY_SHAPE = /^pk_(test|live)_[0-9A-Za-z]{32}$/;

export interface Principal {
  keyId: string;
  project: ProjectMe;
  scopes: ReadonlySet<string>;
}

/** What checking a presented key found. Expected outcomes are values; only faults throw. */
export type KeyCheck = { kind: 'valid'; principal: Principal } | { kind: 'invalid' } | { kind: 'revoked' };

export interface CreatedKey {
  id: string;
  key: string;
  projectId: string;
  scopes: Scope[];
}

export const hashKey = (key: string) => createHash('sha256').update(key).digest();

export function generateKey(mode: 'test' | 'live'): string {
  let random = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) random += BASE62[randomInt(62)];
  return `pk_${mode}_${random}`;
}

export const keyService = (db: Db) => {
  const store = keyStore(db);
  return {
    async create(project: ProjectMe, scopes: Scope[]): Promise<CreatedKey> {
      const key = generateKey(project.mode);
      const id = await store.insert(project.id, hashKey(key), key.slice(0, 12), scopes);
      return { id, key, projectId: project.id, scopes };
    },

    revoke: (keyId: string) => store.revoke(keyId),

    /** Looks the key up by its hash. A key of the wrong shape is invalid without a database call. */
    async check(key: string): Promise<KeyCheck> {
      if (!KEY_SHAPE.test(key)) return { kind: 'invalid' };
      const row = await store.findByHash(hashKey(key));
      if (!row) return { kind: 'invalid' };
      if (row.revoked_at) return { kind: 'revoked' };
      return {
        kind: 'valid',
        principal: { keyId: row.id, project: toProjectMe(row.project), scopes: new Set(row.scopes) },
      };
    },
  };
};
