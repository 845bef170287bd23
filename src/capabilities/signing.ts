// The signing keys of capabilities: what Core sends a capability (an erasure request, a request the gateway
// forwards) is signed with its signing secrets, the active one and, during a rotation, the previous one,
// as Standard Webhooks sign. Unsealed once and kept 5 s, so a rotation is seen within 5 s.
import { createSecretKey, type KeyObject } from 'node:crypto';
import type { Keyring } from '../crypto.ts';
import type { Db } from '../db/database.ts';
import { signingKeys } from '../webhooks/secrets.ts';
import { capabilityStore } from './store.ts';

const KEPT_MS = 5000;

export class CapabilitySigning {
  readonly #db: Db;
  readonly #keyring: Keyring;
  readonly #keys = new Map<string, { at: number; keys: Promise<KeyObject[]> }>();

  constructor(db: Db, keyring: Keyring) {
    this.#db = db;
    this.#keyring = keyring;
  }

  /** The capability's signing keys, active first; none when it does not exist. */
  keysOf(capability: string): Promise<KeyObject[]> {
    const kept = this.#keys.get(capability);
    if (kept && Date.now() - kept.at < KEPT_MS) return kept.keys;
    const keys = this.#read(capability);
    this.#keys.set(capability, { at: Date.now(), keys });
    keys.catch(() => this.#keys.delete(capability)); // a failed read is not kept
    return keys;
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
