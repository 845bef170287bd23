// The endpoints' signing keys, own headers, credentials and broker targets, unsealed once and kept (the
// signature itself: lib/signature.ts).
import { createSecretKey, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Keyring } from '../lib/crypto.ts';
import { openAuthSecret, openTlsKey } from '../webhooks/credentials.ts';
import { openHeaders } from '../webhooks/headers.ts';
import { signingKeys } from '../webhooks/secrets.ts';
import { type ClearTarget, type DestinationType, openTargetUrl } from '../webhooks/targets.ts';
import type { Credentials, OpenTarget } from './destination.ts';

const CACHED_ENDPOINTS = 10_000;

/**
 * The signing keys of endpoints, unsealed once and kept as KeyObjects: unsealing per delivery, and
 * handing createHmac raw bytes (it makes a key of them on every call), cost the worker more CPU than the
 * HMAC itself. An entry holds only while the endpoint's sealed secrets are the ones the claim read, so a
 * rotation or retirement takes effect with the next claimed delivery. Bounded; the least recently used
 * endpoint goes first.
 */
export function signingKeyCache(keyring: Keyring) {
  const entries = new LRUCache<string, { active: Buffer; previous: Buffer | null; keys: KeyObject[] }>({
    max: CACHED_ENDPOINTS,
  });
  return (endpointId: string, active: Buffer, previous: Buffer | null): KeyObject[] => {
    const entry = entries.get(endpointId);
    if (entry && same(entry.active, active) && same(entry.previous, previous)) return entry.keys;
    const keys = signingKeys(keyring, endpointId, active, previous).map((key) => createSecretKey(key));
    entries.set(endpointId, { active, previous, keys });
    return keys;
  };
}

const same = (a: Buffer | null, b: Buffer | null) => (a === null ? b === null : b !== null && a.equals(b));

/**
 * The endpoints' own headers, unsealed once and kept while their sealed value is the one the claim read
 * (a PATCH takes effect with the next claimed delivery). An endpoint with none costs nothing.
 */
export function headersCache(keyring: Keyring) {
  const entries = new LRUCache<string, { sealed: Buffer; headers: Record<string, string> }>({
    max: CACHED_ENDPOINTS,
  });
  return (endpointId: string, sealed: Buffer | null): Record<string, string> | undefined => {
    if (sealed === null) return undefined;
    const entry = entries.get(endpointId);
    if (entry?.sealed.equals(sealed)) return entry.headers;
    const headers = openHeaders(keyring, endpointId, sealed);
    entries.set(endpointId, { sealed, headers });
    return headers;
  };
}

/** An endpoint's credentials as the claim read them: what is in clear, and the secrets sealed. */
export interface SealedCredentials {
  auth: { tokenUrl: string; clientId: string; scope?: string; audience?: string } | null;
  auth_secret_sealed: Buffer | null;
  tls_certificate: string | null;
  tls_key_sealed: Buffer | null;
}

/**
 * The endpoints' credentials, their secrets unsealed once and kept while the sealed bytes are the ones
 * the claim read (a PATCH takes effect with the next claimed delivery). An endpoint with none costs two
 * null checks.
 */
export function credentialsCache(keyring: Keyring) {
  const entries = new LRUCache<string, { auth: Buffer | null; tls: Buffer | null; credentials: Credentials }>(
    {
      max: CACHED_ENDPOINTS,
    },
  );
  return (endpointId: string, sealed: SealedCredentials): Credentials | undefined => {
    const {
      auth,
      auth_secret_sealed: authSealed,
      tls_certificate: certificate,
      tls_key_sealed: tlsSealed,
    } = sealed;
    if (authSealed === null && tlsSealed === null) return undefined;
    const entry = entries.get(endpointId);
    if (
      entry &&
      same(entry.auth, authSealed) &&
      same(entry.tls, tlsSealed) &&
      sameClear(entry.credentials, sealed)
    )
      return entry.credentials;
    const credentials: Credentials = {};
    if (auth && authSealed)
      credentials.oauth = { ...auth, clientSecret: openAuthSecret(keyring, endpointId, authSealed) };
    if (certificate && tlsSealed)
      credentials.tls = { certificate, privateKey: openTlsKey(keyring, endpointId, tlsSealed) };
    entries.set(endpointId, { auth: authSealed, tls: tlsSealed, credentials });
    return credentials;
  };
}

/** Whether what is in clear is still what was opened with it (a new token URL with the same secret). */
const sameClear = (held: Credentials, sealed: SealedCredentials) =>
  held.tls?.certificate === (sealed.tls_certificate ?? undefined) &&
  held.oauth?.tokenUrl === sealed.auth?.tokenUrl &&
  held.oauth?.clientId === sealed.auth?.clientId &&
  held.oauth?.scope === sealed.auth?.scope &&
  held.oauth?.audience === sealed.auth?.audience;

/** A destination's target as the claim read it: its type, what is in clear, and its password sealed. */
export interface ClaimedTarget {
  destination_type: DestinationType;
  target: ClearTarget | null;
  target_secret_sealed: Buffer | null;
}

/**
 * The destinations' targets as a send needs them (a broker's URL with its password opened once, kept while
 * the sealed bytes and the URL are the ones the claim read); undefined for a webhook.
 */
export function targetsCache(keyring: Keyring) {
  const entries = new LRUCache<string, { url: string; sealed: Buffer | null; opened: string }>({
    max: CACHED_ENDPOINTS,
  });
  return (endpointId: string, sealed: ClaimedTarget): OpenTarget | undefined => {
    const { destination_type: type, target } = sealed;
    if (type === 'webhook') return undefined;
    const { hasPassword: _, url = '', ...names } = target ?? {};
    if (type === 'polling') return { type, url: '' };
    const entry = entries.get(endpointId);
    if (entry && entry.url === url && same(entry.sealed, sealed.target_secret_sealed))
      return { type, url: entry.opened, ...names };
    const opened = openTargetUrl(keyring, endpointId, url, sealed.target_secret_sealed);
    entries.set(endpointId, { url, sealed: sealed.target_secret_sealed, opened });
    return { type, url: opened, ...names };
  };
}
