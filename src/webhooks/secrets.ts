// Signing secrets of webhook endpoints: `whsec_` + base64 of 32 random bytes, returned in clear once (at
// creation and rotation) and kept only sealed, bound to their endpoint (it cannot be moved to another).
import { type Keyring, randomPooled, seal, unseal } from '../crypto.ts';

const SECRET_PREFIX = 'whsec_';

const secretContext = (endpointId: string) => `webhook-secret:${endpointId}`;

/** A new secret for an endpoint: in clear (to show once) and sealed (to store). */
export function newSecret(keyring: Keyring, endpointId: string) {
  const bytes = randomPooled(32);
  return {
    clear: `${SECRET_PREFIX}${bytes.toString('base64')}`,
    sealed: seal(keyring, bytes, secretContext(endpointId)),
  };
}

/** The HMAC keys of an endpoint from its sealed secrets: the active one, then the previous one if any. */
export function signingKeys(
  keyring: Keyring,
  endpointId: string,
  active: Buffer,
  previous: Buffer | null,
): Buffer[] {
  const open = (sealed: Buffer) => unseal(keyring, sealed, secretContext(endpointId));
  return previous ? [open(active), open(previous)] : [open(active)];
}
