// Capabilities (docs/capabilities.md): products that plug in as services of their own. An operator registers
// one (its first key and signing secret shown once), sets where its traffic goes, gives it more keys, and
// rotates its signing secret; the capability itself declares its manifest with its own key. Every change
// is audited.

import type { Work } from '../../audit/work.ts';
import type { TenantSchemas } from '../../catalogue/validation.ts';
import { CAPABILITY_SCOPE } from '../../keys/scopes.ts';
import { generateKey, hashKey } from '../../keys/service.ts';
import { keyStore } from '../../keys/store.ts';
import type { Keyring } from '../../lib/crypto.ts';
import { notFound, PlatformError } from '../../lib/errors.ts';
import type { BreakerState } from '../../registry.ts';
import { bindAtAnswer } from '../../settings/lease.ts';
import { newSecret } from '../../webhooks/secrets.ts';
import { breakerStore } from './breakers.ts';
import { type Addresses, checkManifest, type Manifest } from './manifest.ts';
import { type CapabilityRow, capabilityStore } from './store.ts';

export interface Capability {
  name: string;
  description: string;
  upstream: string | null;
  erasureUrl: string | null;
  manifest: Manifest | null;
  grants: Grant[];
  hasPreviousSigningSecret: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface NewCapability {
  name: string;
  description: string;
  upstream?: string | null;
  erasureUrl?: string | null;
}

/** What an operator may grant a capability beyond its own routes (a billing service needs both). */
export const GRANTS = ['projects:read', 'usage:read'] as const;
export type Grant = (typeof GRANTS)[number];

export type CapabilityPatch = Partial<Pick<NewCapability, 'description' | 'upstream' | 'erasureUrl'>> & {
  grants?: Grant[];
};

const DISPLAY_PREFIX_LENGTH = 12;

export const toCapability = (row: CapabilityRow): Capability => ({
  name: row.name,
  description: row.description,
  upstream: row.upstream,
  erasureUrl: row.erasure_url,
  manifest: row.manifest,
  grants: row.grants as Grant[],
  hasPreviousSigningSecret: row.has_previous_secret,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** An http(s) URL of the company's own services (private addresses allowed: only an operator sets them). */
function checkAddress(value: string | null | undefined, pointer: string): string | null {
  if (value === undefined || value === null) return null;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {}
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
    const detail = 'an http(s) URL without credentials';
    throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer, detail }] });
  }
  return value.replace(/\/+$/, '');
}

/**
 * `changed` runs once a change commits (the registry reads the capabilities again); `leaving` settles,
 * in the removal's transaction, what other rooms hold for a capability that leaves (its pending erasure
 * tasks skipped).
 */
export const capabilityService = (
  { db, hooks, audit }: Work,
  deps: {
    keyring: Keyring;
    schemas: TenantSchemas;
    changed: () => void;
    leaving: (name: string) => Promise<void>;
  },
) => {
  const store = capabilityStore(db);
  const find = async (name: string, lock = false) => {
    const row = await store.get(name, { lock });
    if (!row) throw notFound('capability');
    return row;
  };

  async function newKey(capability: string) {
    const key = generateKey('cap');
    const row = await keyStore(db).insert({
      projectId: null,
      capability,
      hash: hashKey(key),
      prefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
      scopes: [CAPABILITY_SCOPE],
      name: null,
      expiresAt: null,
    });
    audit({
      action: 'key.created',
      projectId: null,
      target: { type: 'key', id: row.id },
      fields: ['capability'],
    });
    return { id: row.id, capability, prefix: row.display_prefix, createdAt: row.created_at, key };
  }

  return {
    /** A capability, its first key and its signing secret (both shown this once). */
    async register(input: NewCapability) {
      if (input.name === 'core') {
        const detail = 'core is the platform’s own capability';
        throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer: '/name', detail }] });
      }
      const secret = newSecret(deps.keyring, { capability: input.name });
      const row = await store.insert({
        name: input.name,
        description: input.description,
        upstream: checkAddress(input.upstream, '/upstream'),
        erasureUrl: checkAddress(input.erasureUrl, '/erasureUrl'),
        sealedSecret: secret.sealed,
      });
      if (!row) throw new PlatformError('CAPABILITY_NAME_TAKEN', `a capability named ${input.name} exists`);
      audit({
        action: 'capability.created',
        projectId: null,
        target: { type: 'capability', id: row.name },
        fields: Object.keys(input).filter((field) => input[field as keyof NewCapability] !== undefined),
      });
      const key = await newKey(row.name);
      hooks.onCommit(deps.changed);
      return { ...toCapability(row), key: key.key, keyId: key.id, signingSecret: secret.clear };
    },

    list: async () => (await store.list()).map(toCapability),

    get: async (name: string) => toCapability(await find(name)),

    /** What only an operator decides: the description, where its requests and erasures go, its grants. */
    async update(name: string, patch: CapabilityPatch) {
      const current = await find(name, true);
      const values = {
        grants: patch.grants === undefined ? current.grants : [...new Set(patch.grants)].sort(),
        description: patch.description ?? current.description,
        upstream: patch.upstream === undefined ? current.upstream : checkAddress(patch.upstream, '/upstream'),
        erasureUrl:
          patch.erasureUrl === undefined
            ? current.erasure_url
            : checkAddress(patch.erasureUrl, '/erasureUrl'),
      };
      const before = {
        grants: current.grants,
        description: current.description,
        upstream: current.upstream,
        erasureUrl: current.erasure_url,
      };
      const fields = (Object.keys(values) as (keyof typeof values)[]).filter(
        (f) => JSON.stringify(values[f]) !== JSON.stringify(before[f]),
      );
      if (fields.length === 0) return toCapability(current);
      if (current.manifest) await checkManifest(name, current.manifest, values, deps.schemas);
      const row = await store.update(name, values);
      await bindAtAnswer({ db, hooks }, { kind: 'capability', name });
      audit({
        action: 'capability.updated',
        projectId: null,
        target: { type: 'capability', id: name },
        fields,
      });
      hooks.onCommit(deps.changed);
      return toCapability(row as CapabilityRow);
    },

    /** Another key beside its others (an old one is revoked as any key is). */
    async createKey(name: string) {
      await find(name);
      return newKey(name);
    },

    /** A new signing secret; the previous one keeps signing until it is retired. */
    async rotateSigningSecret(name: string) {
      await find(name, true);
      const secret = newSecret(deps.keyring, { capability: name });
      await store.rotate(name, secret.sealed);
      await bindAtAnswer({ db, hooks }, { kind: 'capability', name });
      audit({
        action: 'capability.secret_rotated',
        projectId: null,
        target: { type: 'capability', id: name },
        fields: ['signingSecret'],
      });
      return { name, signingSecret: secret.clear };
    },

    async retirePreviousSigningSecret(name: string) {
      const row = await store.retirePrevious(name);
      if (!row) throw notFound('capability');
      if (row.retired) {
        await bindAtAnswer({ db, hooks }, { kind: 'capability', name });
        const fields = ['previousSigningSecret'];
        audit({
          action: 'capability.secret_retired',
          projectId: null,
          target: { type: 'capability', id: name },
          fields,
        });
      }
      return toCapability(row);
    },

    /**
     * The capability leaves: its keys and breaker reports removed with it, its pending erasure tasks
     * skipped, its gateway routes, providers, scopes and event types gone from every process before
     * the answer; its usage, events and deliveries kept. The name is free again.
     */
    async remove(name: string) {
      await find(name, true);
      await deps.leaving(name);
      await store.remove(name);
      await bindAtAnswer({ db, hooks }, { kind: 'capability', name });
      audit({
        action: 'capability.removed',
        projectId: null,
        target: { type: 'capability', id: name },
        fields: [],
      });
      hooks.onCommit(deps.changed);
    },

    /** An instance's report of its providers' breakers; each provider must be one the manifest declares. */
    async reportBreakers(
      name: string,
      instance: string,
      providers: { provider: string; state: BreakerState }[],
    ) {
      const declared = new Set((await find(name)).manifest?.providers.map((p) => p.name) ?? []);
      const errors = providers.flatMap(({ provider }, i) =>
        declared.has(provider)
          ? []
          : [{ pointer: `/providers/${i}/provider`, detail: `${name} declares no provider ${provider}` }],
      );
      if (errors.length > 0)
        throw new PlatformError('VALIDATION_FAILED', 'a provider is not declared in the manifest', {
          errors,
        });
      await breakerStore(db).report(name, instance, providers);
    },

    /** The capability with what its live instances last reported of their breakers (for its operator). */
    async withReports(name: string) {
      const capability = toCapability(await find(name));
      const reports = (await breakerStore(db).reportsOf(name)).map((r) => ({
        instance: r.instance,
        provider: r.provider,
        state: r.state,
        reportedAt: r.reported_at,
      }));
      return { ...capability, breakerReports: reports };
    },

    /** Replaces the capability's manifest (its own key's call), checked against its rules and addresses. */
    async putManifest(name: string, manifest: Manifest) {
      const current = await find(name, true);
      const addresses: Addresses = { upstream: current.upstream, erasureUrl: current.erasure_url };
      await checkManifest(name, manifest, addresses, deps.schemas);
      const row = await store.putManifest(name, manifest);
      audit({
        action: 'capability.manifest_put',
        projectId: null,
        target: { type: 'capability', id: name },
        fields: ['manifest'],
      });
      hooks.onCommit(deps.changed);
      return toCapability(row as CapabilityRow);
    },
  };
};
