// The signing keys of capabilities: what Core sends a capability (an erasure request, a request the gateway
// forwards) is signed with its signing secrets, the active one and, during a rotation, the previous one,
// as Standard Webhooks sign. Unsealed once and kept while this process's settings lease is held: a
// rotation or a retirement makes every process forget them before its 200 (settings/lease.ts).
import { createSecretKey, type KeyObject } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import type { Keyring } from '../../lib/crypto.ts';
import { signingKeys } from '../../webhooks/secrets.ts';
import { capabilityStore } from './store.ts';

export class CapabilitySigning {
  readonly #db: Db;
  readonly #keyring: Keyring;
  readonly #bound: () => boolean;
  readonly #keys = new Map<string, Promise<KeyObject[]>>();

  constructor(db: Db, keyring: Keyring, bound: () => boolean) {
    this.#db = db;
    this.#keyring = keyring;
    this.#bound = bound;
  }

  /** The capability's signing keys, active first; none when it does not exist. */
  keysOf(capability: string): Promise<KeyObject[]> {
    if (!this.#bound()) return this.#read(capability);
    const kept = this.#keys.get(capability);
    if (kept) return kept;
    const keys = this.#read(capability);
    this.#keys.set(capability, keys);
    keys.catch(() => this.#keys.delete(capability)); // a failed read is not kept
    return keys;
  }

  /** Its secrets changed (or it left): the next request reads them anew. */
  forget(capability: string) {
    this.#keys.delete(capability);
  }

  forgetAll() {
    this.#keys.clear();
  }

  async #read(capability: string): Promise<KeyObject[]> {
    const secrets = await capabilityStore(this.#db).secrets(capability);
    if (!secrets) return [];
    const owner = { capability };
    return signingKeys(this.#keyring, owner, secrets.active_secret, secrets.previous_secret).map((key) =>
      createSecretKey(key),
    );
  }
}
