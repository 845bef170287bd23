// Portal sessions: a link a project hands its developers, and the session its page holds as a cookie.
// The code (in the link's fragment, so it never reaches a log) works once, within 10 minutes; the token
// and the code are random 256-bit values stored only as SHA-256. Writes made with the cookie also carry
// a CSRF token derived from the session's token (HMAC), which a page of another site cannot read.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Work } from '../audit/work.ts';
import type { Scope } from '../keys/scopes.ts';
import type { Principal } from '../keys/service.ts';
import { notFound, PlatformError } from '../lib/errors.ts';
import { type Page, pageFrom } from '../lib/pagination.ts';
import { type ProjectMe, toProjectMe } from '../projects/store.ts';
import { type ActiveSession, portalStore, type SessionRow } from './store.ts';

/** The most a session may do: never publish events or erase people, whatever its key may. */
export const PORTAL_SCOPES: readonly Scope[] = [
  'projects:read',
  'usage:read',
  'webhooks:read',
  'webhooks:write',
];
const CODE_TTL_SECONDS = 600;

export interface PortalSession {
  id: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
  language: string;
}

/** What a request made with a session acts as, and the CSRF token its writes must carry. */
export interface SessionPrincipal extends Principal {
  project: ProjectMe;
  /** the session, its CSRF token, and the origins that may frame the portal (the project's) */
  session: { id: string; language: string; csrfToken: string; frameAncestors: string[] };
}

const hash = (secret: string) => createHash('sha256').update(secret).digest();
const secret = () => randomBytes(32).toString('base64url');
const csrfTokenOf = (token: string) =>
  createHmac('sha256', token).update('platform-portal-csrf').digest('base64url');

const toSession = (row: SessionRow): PortalSession => ({
  id: row.id,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
  language: row.language,
});

export const portalService = ({ db, audit }: Work) => ({
  /** A session for the key's project and the one-time link that opens it. */
  async create(
    principal: Principal & { project: ProjectMe },
    input: { ttlSeconds?: number; language?: string },
    publicUrl: string,
  ): Promise<{ id: string; url: string; expiresAt: string }> {
    const { project } = principal;
    const language = input.language ?? project.languages[0] ?? 'en';
    if (!project.languages.includes(language)) {
      const detail = `the project's languages are ${project.languages.join(', ')}`;
      throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer: '/language', detail }] });
    }
    const code = secret();
    const row = await portalStore(db).insert({
      projectId: project.id,
      keyId: principal.keyId,
      scopes: PORTAL_SCOPES.filter((scope) => principal.scopes.has(scope)),
      language,
      codeHash: hash(code),
      ttlSeconds: input.ttlSeconds ?? 3600,
      codeTtlSeconds: CODE_TTL_SECONDS,
    });
    audit({
      action: 'portal_session.created',
      projectId: project.id,
      target: { type: 'portal_session', id: row.id },
    });
    return { id: row.id, url: `${publicUrl}/portal/enter#code=${code}`, expiresAt: row.expires_at };
  },

  async list(projectId: string, page: Page) {
    const rows = await portalStore(db).list(projectId, page);
    const { data, nextCursor } = pageFrom(rows, page.limit, (row) => ({ at: row.created_at, id: row.id }));
    return { data: data.map(toSession), nextCursor };
  },

  /** Ends a session of the project at once; revoking it again changes nothing. */
  async revoke(projectId: string, id: string): Promise<void> {
    const revoked = await portalStore(db).revoke(projectId, id);
    if (!revoked) throw notFound('portal session');
    if (revoked.revokedNow)
      audit({ action: 'portal_session.revoked', projectId, target: { type: 'portal_session', id } });
  },

  /** A session's own end, when its user signs out. */
  async signOut(principal: SessionPrincipal): Promise<void> {
    await portalStore(db).revoke(principal.project.id, principal.session.id);
  },

  /** The code traded for a new session token (the cookie); a code that cannot be used → 401. */
  async exchange(code: string): Promise<{ token: string; principal: SessionPrincipal }> {
    const token = secret();
    const session = await portalStore(db).exchange(hash(code), hash(token));
    if (!session) throw new PlatformError('PORTAL_SESSION_EXPIRED', 'this link was used, or it expired');
    return { token, principal: principalOf(session, token) };
  },

  /** The session a cookie's token belongs to; an unknown, expired or revoked one → 401. */
  async check(token: string): Promise<SessionPrincipal> {
    const session = /^[A-Za-z0-9_-]{43}$/.test(token)
      ? await portalStore(db).findByToken(hash(token))
      : undefined;
    if (!session) throw new PlatformError('PORTAL_SESSION_EXPIRED');
    return principalOf(session, token);
  },
});

function principalOf(session: ActiveSession, token: string): SessionPrincipal {
  return {
    keyId: session.key_id,
    kind: 'project',
    project: toProjectMe(session.project),
    capability: null,
    scopes: new Set(session.scopes),
    expiresAt: new Date(session.expires_at).getTime(),
    session: {
      id: session.id,
      language: session.language,
      csrfToken: csrfTokenOf(token),
      frameAncestors: session.project.portal_frame_ancestors ?? [],
    },
  };
}

/** Whether a write's x-csrf-token is its session's (compared in constant time). */
export function csrfMatches(principal: SessionPrincipal, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const expected = Buffer.from(principal.session.csrfToken);
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
