// Signing secrets: `whsec_` + base64 of 32 random bytes, returned in clear once (at creation and rotation)
// and kept only sealed, bound to their owner (an endpoint, or a capability: sealed for one, a secret
// cannot be opened as another's). Deliveries to endpoints and Core's calls to capabilities are signed
// with them, as Standard Webhooks sign.
import { type Keyring, seal, unseal } from '../lib/crypto.ts';
import { randomPooled } from '../lib/random.ts';

const SECRET_PREFIX = 'whsec_';

/** Whose secret: an endpoint's (by its id, the default) or a capability's (by its name). */
export type SecretOwner = string | { capability: string };

const contextOf = (owner: SecretOwner) =>
  typeof owner === 'string' ? `webhook-secret:${owner}` : `capability-secret:${owner.capability}`;

/** A new secret: in clear (to show once) and sealed (to store). */
export function newSecret(keyring: Keyring, owner: SecretOwner) {
  const bytes = randomPooled(32);
  return {
    clear: `${SECRET_PREFIX}${bytes.toString('base64')}`,
    sealed: seal(keyring, bytes, contextOf(owner)),
  };
}

/** The HMAC keys from an owner's sealed secrets: the active one, then the previous one if any. */
export function signingKeys(
  keyring: Keyring,
  owner: SecretOwner,
  active: Buffer,
  previous: Buffer | null,
): Buffer[] {
  const open = (sealed: Buffer) => unseal(keyring, sealed, contextOf(owner));
  return previous ? [open(active), open(previous)] : [open(active)];
}
