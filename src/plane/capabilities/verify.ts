// Verifying a project's key for a capability (POST /capability/v1/keys/verify): on the path of every request
// a product serves, so it answers from the process's key cache (a revocation is seen within its 5 s), as
// the service's own authentication does. Expected outcomes are answers, never errors: a capability asks
// about keys its callers present, and a bad one is news, not a fault.
import type { KeyCache } from '../../keys/cache.ts';

export type Verified =
  | {
      valid: true;
      projectId: string;
      projectSlug: string;
      mode: 'test' | 'live';
      keyId: string;
      scopes: string[];
    }
  | { valid: false; code: 'API_KEY_INVALID' | 'API_KEY_REVOKED' | 'API_KEY_EXPIRED' }
  | { valid: false; code: 'INSUFFICIENT_SCOPE'; missingScopes: string[] };

const CODES = { invalid: 'API_KEY_INVALID', revoked: 'API_KEY_REVOKED', expired: 'API_KEY_EXPIRED' } as const;

export async function verifyKey(keys: KeyCache, key: string, scopes: string[] = []): Promise<Verified> {
  const check = keys.fresh(key) ?? (await keys.check(key));
  if (check.kind !== 'valid') return { valid: false, code: CODES[check.kind] };
  const { principal } = check;
  // Only a project's key is one a product's caller may present.
  if (!principal.project) return { valid: false, code: 'API_KEY_INVALID' };
  if (principal.expiresAt !== null && principal.expiresAt <= Date.now())
    return { valid: false, code: 'API_KEY_EXPIRED' };
  const missingScopes = scopes.filter((scope) => !principal.scopes.has(scope));
  if (missingScopes.length > 0) return { valid: false, code: 'INSUFFICIENT_SCOPE', missingScopes };
  const { project } = principal;
  return {
    valid: true,
    projectId: project.id,
    projectSlug: project.slug,
    mode: project.mode,
    keyId: principal.keyId,
    scopes: [...principal.scopes].sort(),
  };
}
