// What an endpoint authenticates with (contract 0.4): OAuth 2.0 client credentials, whose token the worker
// fetches and sends as a bearer, and a client certificate for mutual TLS. The client secret and the private
// key are sealed at rest, bound to their endpoint, and never answered (`***`); the rest is kept in clear,
// for the answers and for the worker.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { type Keyring, seal, unseal } from '../lib/crypto.ts';
import { PlatformError } from '../lib/errors.ts';

/** OAuth 2.0 client credentials as given. */
export interface AuthInput {
  type: 'oauth2_client_credentials';
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
  audience?: string;
}

/** What is kept in clear of them, and answered (with clientSecret as ***). */
export type AuthPublic = Omit<AuthInput, 'clientSecret'>;

export interface TlsInput {
  certificate: string;
  privateKey: string;
}

const authContext = (endpointId: string) => `webhook-auth:${endpointId}`;
const tlsContext = (endpointId: string) => `webhook-tls:${endpointId}`;

/** The credentials split into what is kept in clear and the secret, sealed. */
export function sealAuth(keyring: Keyring, endpointId: string, auth: AuthInput) {
  const { clientSecret, ...clear } = auth;
  return { clear, sealed: seal(keyring, Buffer.from(clientSecret), authContext(endpointId)) };
}

export const openAuthSecret = (keyring: Keyring, endpointId: string, sealed: Buffer) =>
  unseal(keyring, sealed, authContext(endpointId)).toString('utf8');

/**
 * The certificate and its key, checked (both PEM, the key the certificate's, the certificate not
 * expired), the key sealed. A 400 pointing into /tls otherwise.
 */
export function sealTls(keyring: Keyring, endpointId: string, tls: TlsInput, now = new Date()) {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(tls.certificate);
  } catch {
    return refuse('/tls/certificate', 'the certificate is not a PEM X.509 certificate');
  }
  let matches = false;
  try {
    matches = certificate.checkPrivateKey(createPrivateKey(tls.privateKey));
  } catch {
    return refuse('/tls/privateKey', 'the private key is not a PEM private key (unencrypted)');
  }
  if (!matches) return refuse('/tls/privateKey', 'the private key is not the certificate’s');
  if (Date.parse(certificate.validTo) <= now.getTime())
    return refuse(
      '/tls/certificate',
      `the certificate expired on ${new Date(certificate.validTo).toISOString()}`,
    );
  return {
    certificate: tls.certificate,
    sealed: seal(keyring, Buffer.from(tls.privateKey), tlsContext(endpointId)),
  };
}

export const openTlsKey = (keyring: Keyring, endpointId: string, sealed: Buffer) =>
  unseal(keyring, sealed, tlsContext(endpointId)).toString('utf8');

/** When the certificate kept for an endpoint expires, as answers show it. */
export const expiryOf = (certificate: string) =>
  new Date(new X509Certificate(certificate).validTo).toISOString();

function refuse(pointer: string, detail: string): never {
  throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer, detail }] });
}
