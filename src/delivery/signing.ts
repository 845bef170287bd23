// The endpoints' signing keys and own headers, unsealed once and kept (the signature itself:
// lib/signature.ts).
import { createSecretKey, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Keyring } from '../lib/crypto.ts';
import { openHeaders } from '../webhooks/headers.ts';
import { signingKeys } from '../webhooks/secrets.ts';

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
