// The portal's calls to the API: same origin, authenticated by the session's cookie, every write with
// the session's CSRF token and an idempotency key. The key belongs to the action (a form's submission),
// not to the click, so a double click or a retry never makes the same change twice.
import type { components } from '@platform-core/client';

export type Schemas = components['schemas'];
export type Endpoint = Schemas['Destination'];
export type Deliveries = Schemas['EndpointDeliveries'];
export type Problem = Schemas['PlatformError'];

export interface Session {
  project: Schemas['ProjectMe'];
  language: string;
  scopes: string[];
  expiresAt: string;
  csrfToken: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Partial<Problem>,
  ) {
    super(problem.detail ?? `HTTP ${status}`);
  }
}

/** A random idempotency key: crypto.randomUUID exists only in secure contexts (https, localhost). */
export const newKey = (): string =>
  typeof crypto.randomUUID === 'function'
    ? crypto.randomUUID()
    : Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');

let csrfToken = '';
let onExpired: () => void = () => {};

export function useSession(session: Session, expired: () => void) {
  csrfToken = session.csrfToken;
  onExpired = expired;
}

/**
 * Told after every change the portal makes (a write that succeeded: a retry, a test event, a recovery, a
 * pause): what shows deliveries follows it closely for a while (screens/delivery-log.tsx).
 */
export const changes = new EventTarget();

export async function call<T>(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  options: { body?: unknown; idempotencyKey?: string; asText?: boolean } = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') {
    headers['x-csrf-token'] = csrfToken;
    headers['idempotency-key'] = options.idempotencyKey ?? newKey();
  }
  if (options.body !== undefined)
    headers['content-type'] = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  if (response.ok && method !== 'GET') changes.dispatchEvent(new Event('change'));
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let body: unknown = {};
  try {
    body = JSON.parse(text);
  } catch {}
  if (response.ok) return (options.asText ? { body, text } : body) as T;
  if (response.status === 401) onExpired();
  throw new ApiError(response.status, body as Partial<Problem>);
}

/** The session a link's code opens (the page at /portal/enter), or the one the cookie holds. */
export async function openSession(code: string | undefined): Promise<Session | undefined> {
  const response = code
    ? await fetch('/portal/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code }),
        credentials: 'same-origin',
      })
    : await fetch('/portal/session', { credentials: 'same-origin' });
  return response.ok ? ((await response.json()) as Session) : undefined;
}
