// Webhook endpoints and the state machine of their signing secrets (spec section 3): one active secret,
// plus a previous one while a rotation is under way (secrets.ts makes and seals them).
import { randomUUID } from 'node:crypto';
import type { Work } from '../audit/work.ts';
import type { DeclaredTypes } from '../catalogue/declared.ts';
import { outsideRegistry } from '../catalogue/service.ts';
import { endpointAttempts } from '../delivery-store/endpoint-attempts.ts';
import { cancelPending, forgetSlots } from '../delivery-store/enqueue.ts';
import { holdForPause, lockLanes, relane } from '../delivery-store/lanes.ts';
import { emitOperational } from '../delivery-store/operational.ts';
import { write } from '../idempotency/write.ts';
import type { Keyring } from '../lib/crypto.ts';
import { notFound, PlatformError } from '../lib/errors.ts';
import type { CapabilityRegistry } from '../registry.ts';
import { requireAllowedUrl, type UrlCheckOptions } from './address-policy.ts';
import {
  type AuthInput,
  type AuthPublic,
  expiryOf,
  sealAuth,
  sealTls,
  type TlsInput,
} from './credentials.ts';
import { compileFilter } from './filter.ts';
import {
  MOST_HEADERS,
  MOST_METADATA,
  maskedHeaders,
  merged,
  openHeaders,
  requireAllowedHeaders,
  sealHeaders,
} from './headers.ts';
import { type EndpointChange, type EndpointRow, newEndpointRow } from './rows.ts';
import { newSecret } from './secrets.ts';
import { DELETED, ENDPOINTS_PER_PROJECT, endpointStore } from './store.ts';
import { type ClearTarget, type DestinationType, sealPassword, shownTarget } from './targets.ts';

export interface WebhookEndpoint {
  id: string;
  url: string;
  eventTypes: string[];
  active: boolean;
  paused: boolean;
  rateLimitPerSecond: number | null;
  ordering: 'none' | 'endpoint' | 'key';
  /** its pending deliveries */
  waiting: number;
  hasPreviousSecret: boolean;
  name: string | null;
  description: string | null;
  metadata: Record<string, string>;
  /** the names of its own headers, each as *** */
  headers: Record<string, '***'>;
  filter: Record<string, unknown> | null;
  auth: (AuthPublic & { clientSecret: '***' }) | null;
  tls: { certificate: string; privateKey: '***'; expiresAt: string } | null;
  /** as a destination: its type and target (a webhook's target is its url; a broker URL's password ***) */
  type: DestinationType;
  target: ReturnType<typeof shownTarget>;
  createdAt: string;
}

/** A destination's target that is not a webhook's: checked, kept in clear, and its password to seal. */
export interface BrokerTarget {
  type: Exclude<DestinationType, 'webhook'>;
  clear: ClearTarget;
  password: string | null;
}

/** What a create may give beyond the address and types. */
export interface ReceiverInput {
  name?: string | null;
  description?: string | null;
  metadata?: Record<string, string>;
  headers?: Record<string, string>;
  filter?: Record<string, unknown> | null;
  auth?: AuthInput | null;
  tls?: TlsInput | null;
}

/** What a PATCH may give: metadata and headers merge into what the endpoint has. */
export type EndpointPatch = Omit<EndpointChange, 'metadata' | 'headers' | 'filter' | 'auth' | 'tls'> & {
  metadata?: Record<string, string | null>;
  headers?: Record<string, string | null>;
  filter?: Record<string, unknown> | null;
  auth?: AuthInput | null;
  tls?: TlsInput | null;
};

/** A filter as given and compiled (a 400 when it is not a valid pattern); null for none. */
const filterOf = (pattern: Record<string, unknown> | null | undefined) =>
  pattern ? { pattern, path: compileFilter(pattern) } : null;

const toRecord = (row: EndpointRow): WebhookEndpoint => ({
  id: row.id,
  url: row.url,
  eventTypes: row.event_types,
  active: row.active,
  paused: row.paused,
  rateLimitPerSecond: row.rate_limit_per_second,
  ordering: row.ordering,
  waiting: row.waiting,
  hasPreviousSecret: row.has_previous_secret,
  name: row.name,
  description: row.description,
  metadata: row.metadata,
  headers: maskedHeaders(row.header_names),
  filter: row.filter,
  auth: row.auth && { ...row.auth, clientSecret: '***' },
  tls: row.tls_certificate
    ? { certificate: row.tls_certificate, privateKey: '***', expiresAt: expiryOf(row.tls_certificate) }
    : null,
  type: row.destination_type,
  target: shownTarget(row.destination_type, row.url, row.target),
  createdAt: row.created_at.toISOString(),
});

export interface EndpointDeps {
  keyring: Keyring;
  /** where webhooks may go: see address-policy.ts */
  addresses: UrlCheckOptions;
  /** the registry's event types, for the catalogue */
  registry: CapabilityRegistry;
  /** what each project's catalogue declares, as last read: what a create predicts */
  declaredTypes: DeclaredTypes;
}

export const webhookEndpointService = ({ db, hooks, audit }: Work, deps: EndpointDeps) => {
  const store = endpointStore(db);
  const attempts = endpointAttempts(db);
  const { keyring } = deps;
  const sealTarget = (id: string, { type, clear, password }: BrokerTarget) => ({
    type,
    clear,
    sealed: password === null ? null : sealPassword(keyring, id, password),
  });

  /**
   * A patch's metadata and headers merged into the endpoint's (its row locked): the whole of each as the
   * change to write, the headers resealed; whether the headers changed. Without them, nothing is read.
   */
  async function merge(projectId: string, id: string, patch: EndpointPatch) {
    const { metadata, headers, filter, auth, tls, ...rest } = patch;
    const change: EndpointChange = rest;
    if (filter !== undefined) change.filter = filterOf(filter);
    if (auth !== undefined) change.auth = auth && sealAuth(keyring, id, auth);
    if (tls !== undefined) change.tls = tls && sealTls(keyring, id, tls);
    if (!metadata && !headers && !auth) return { change, headersChanged: false };
    const current = await store.receiverForUpdate(projectId, id);
    if (!current) throw notFound('webhook endpoint');
    if (metadata) change.metadata = merged('metadata', current.metadata, metadata, MOST_METADATA);
    const hasAuth = auth !== undefined ? auth !== null : current.has_auth;
    if (!headers) {
      requireNoAuthorization(current.header_names, hasAuth);
      return { change, headersChanged: false };
    }
    const before = openHeaders(keyring, id, current.headers_sealed);
    const after = merged('headers', before, headers, MOST_HEADERS);
    requireNoAuthorization(Object.keys(after), hasAuth);
    change.headers = { names: Object.keys(after), sealed: sealHeaders(keyring, id, after) };
    return { change, headersChanged: JSON.stringify(before) !== JSON.stringify(after) };
  }

  return {
    /**
     * Checks the address (resolving its host name) before the first statement, so no database connection
     * waits on DNS; an idempotent request's claim still comes before the refusal (idempotency/pipeline.ts).
     * Predicted to take place (the project has room and declares the types the platform does not), it is
     * offered as a sole write; otherwise it goes statement by statement and tells what it found.
     */
    async create(
      projectId: string,
      input: { url: string; eventTypes: string[] } & ReceiverInput,
      target?: BrokerTarget,
    ) {
      const headers = input.headers ?? {};
      requireAllowedHeaders(headers);
      requireNoAuthorization(Object.keys(headers), Boolean(input.auth));
      const filter = filterOf(input.filter);
      if (!target) await requireAllowedUrl(input.url, deps.addresses);
      if (input.auth) await requireAllowedUrl(input.auth.tokenUrl, deps.addresses, '/auth/tokenUrl');
      const id = randomUUID();
      const secret = newSecret(keyring, id);
      const endpoint = {
        id,
        url: input.url,
        eventTypes: input.eventTypes,
        sealedSecret: secret.sealed,
        // The wall clock, as the database's now() was: the service's clock is for what tests move.
        createdAt: new Date(),
        name: input.name ?? null,
        description: input.description ?? null,
        metadata: input.metadata ?? {},
        headerNames: Object.keys(headers),
        sealedHeaders: sealHeaders(keyring, id, headers),
        filter,
        auth: input.auth ? sealAuth(keyring, id, input.auth) : null,
        tls: input.tls ? sealTls(keyring, id, input.tls) : null,
      };
      const given = (['name', 'description', 'metadata', 'headers', 'filter', 'auth', 'tls'] as const).filter(
        (f) => f in input,
      );
      audit({
        action: 'endpoint.created',
        projectId,
        target: { type: 'endpoint', id },
        fields: ['url', 'eventTypes', ...given],
      });
      const outside = outsideRegistry(deps.registry, input.eventTypes);
      const declared = await deps.declaredTypes.of(projectId);
      const predicted = {
        ...toRecord(newEndpointRow(endpoint)),
        secret: secret.clear,
        unknownEventTypes: outside.filter((type) => !declared.has(type)),
      };
      const statement = store.insertSole(
        projectId,
        endpoint,
        outside,
        outside.filter((type) => declared.has(type)),
      );
      const ordinary = async () => {
        let row = await store.insertWithinLimit(projectId, endpoint);
        if (!row) {
          throw new PlatformError(
            'WEBHOOK_ENDPOINT_LIMIT_REACHED',
            `a project can have at most ${ENDPOINTS_PER_PROJECT} webhook endpoints and destinations`,
          );
        }
        if (target) row = await store.setTarget(projectId, id, sealTarget(id, target));
        const now = await deps.declaredTypes.of(projectId, true);
        const unknownEventTypes = outside.filter((type) => !now.has(type));
        return { ...toRecord(row as EndpointRow), secret: secret.clear, unknownEventTypes };
      };
      // A broker's or the feed's is a second statement: it goes the ordinary way.
      return target ? ordinary() : write(hooks, { statement, answer: predicted }, ordinary);
    },

    /**
     * The project's destinations (its webhook endpoints only, with `webhooks`), oldest first, each with its
     * attempts of the last 24 hours.
     */
    list: async (projectId: string, webhooks = false) => {
      const [rows, day] = await Promise.all([store.list(projectId, webhooks), attempts.ofDay(projectId)]);
      return rows.map((row) => ({
        ...toRecord(row),
        last24h: day.get(row.id) ?? { attempts: 0, succeeded: 0 },
      }));
    },

    /** Each endpoint's state (active, paused or disabled) and waiting deliveries, for health. */
    async states(projectId: string) {
      return (await store.list(projectId)).map((e) => ({
        id: e.id,
        state: !e.active ? ('disabled' as const) : e.paused ? ('paused' as const) : ('active' as const),
        waiting: e.waiting,
      }));
    },

    async get(projectId: string, id: string) {
      const row = await store.get(projectId, id);
      if (!row) throw notFound('webhook endpoint');
      return toRecord(row);
    },

    /** Its attempts in each of the last 24 hours, succeeded and failed. */
    async hourly(projectId: string, id: string) {
      if (!(await store.get(projectId, id))) throw notFound('webhook endpoint');
      const hours = await attempts.byHour(projectId, id);
      const to = new Date(Date.parse(hours.at(-1)?.hour ?? '') + 3_600_000).toISOString();
      return { from: hours[0]?.hour ?? to, to, hours };
    },

    /**
     * A merge patch of url (checked like a create's, before the first statement), eventTypes, rate,
     * ordering and active. Disabling cancels what is pending; a new ordering re-lanes it; a new rate frees
     * the slots the old one reserved.
     */
    async update(projectId: string, id: string, patch: EndpointPatch) {
      if (patch.headers) requireAllowedHeaders(patch.headers);
      if (patch.url !== undefined) await requireAllowedUrl(patch.url, deps.addresses);
      if (patch.auth) await requireAllowedUrl(patch.auth.tokenUrl, deps.addresses, '/auth/tokenUrl');
      await lockLanes(db, [id]);
      const { change, headersChanged } = await merge(projectId, id, patch);
      const before = await store.update(projectId, id, change);
      if (!before) throw notFound('webhook endpoint');
      if (before.was_active && change.active === false) {
        await cancelPending(db, projectId, id, 'endpoint disabled by its owner');
      }
      if (change.ordering !== undefined && change.ordering !== before.was_ordering) {
        await relane(db, projectId, id);
      }
      if (change.rateLimitPerSecond !== undefined) await forgetSlots(db, projectId, id);
      // Audited only where a value changed: a patch that changes nothing leaves no entry.
      const was: Record<Exclude<keyof EndpointChange, 'headers' | 'auth' | 'tls'>, unknown> = {
        url: before.was_url,
        eventTypes: before.was_event_types,
        rateLimitPerSecond: before.was_rate,
        ordering: before.was_ordering,
        active: before.was_active,
        name: before.was_name,
        description: before.was_description,
        metadata: before.was_metadata,
        filter: before.was_filter,
      };
      const fields: string[] = (Object.keys(was) as (keyof typeof was)[]).filter(
        (field) =>
          field in change &&
          JSON.stringify(field === 'filter' ? (change.filter?.pattern ?? null) : change[field]) !==
            JSON.stringify(was[field]),
      );
      if (headersChanged) fields.push('headers'); // its name only: never a value
      for (const field of ['auth', 'tls'] as const) if (patch[field] !== undefined) fields.push(field);
      if (fields.length > 0) {
        audit({ action: 'endpoint.updated', projectId, target: { type: 'endpoint', id }, fields });
      }
      return this.get(projectId, id);
    },

    /** Pauses or resumes: deliveries go on being created; a paused endpoint's are held, not sent. */
    async setPaused(projectId: string, id: string, paused: boolean) {
      await lockLanes(db, [id]);
      const row = await store.setPaused(projectId, id, paused);
      if (!row) throw notFound('webhook endpoint');
      if (!row.changed) return toRecord(row);
      await holdForPause(db, projectId, id, paused);
      const type = paused ? 'core.endpoint.paused' : 'core.endpoint.resumed';
      const reason = paused ? 'paused by its owner' : 'resumed by its owner';
      await emitOperational(db, [{ projectId, type, data: { endpointId: id, reason } }]);
      audit({ action: 'endpoint.updated', projectId, target: { type: 'endpoint', id }, fields: ['paused'] });
      return this.get(projectId, id);
    },

    /** Cancels the endpoint's pending deliveries (their history stays); how many. */
    async cancelPending(projectId: string, id: string) {
      if (!(await store.get(projectId, id))) throw notFound('webhook endpoint');
      return { cancelled: await cancelPending(db, projectId, id, 'cancelled by the endpoint’s owner') };
    },

    /**
     * Deletes the endpoint and its secrets; its pending deliveries are cancelled (their history stays). A
     * sole write, unless the endpoint is unknown (404) or ordered (its cancel takes the lane lock first).
     */
    async delete(projectId: string, id: string) {
      audit({ action: 'endpoint.deleted', projectId, target: { type: 'endpoint', id } });
      await write(hooks, { statement: store.deleteSole(projectId, id), answer: undefined }, async () => {
        if (!(await store.delete(projectId, id))) throw notFound('webhook endpoint');
        await cancelPending(db, projectId, id, DELETED);
      });
    },

    /** A sole write: its answer, the new secret, is made here; an unknown endpoint goes the ordinary way (404). */
    async rotateSecret(projectId: string, id: string) {
      const secret = newSecret(keyring, id);
      audit({
        action: 'endpoint.secret_rotated',
        projectId,
        target: { type: 'endpoint', id },
        fields: ['secret'],
      });
      const answer = { id, secret: secret.clear };
      return write(hooks, { statement: store.rotateSole(projectId, id, secret.sealed), answer }, async () => {
        if (!(await store.rotate(projectId, id, secret.sealed))) throw notFound('webhook endpoint');
        return answer;
      });
    },

    async retirePreviousSecret(projectId: string, id: string) {
      const row = await store.retirePrevious(projectId, id);
      if (!row) throw notFound('webhook endpoint');
      if (row.retired) {
        const fields = ['previousSecret'];
        audit({ action: 'endpoint.secret_retired', projectId, target: { type: 'endpoint', id }, fields });
      }
      return toRecord(row);
    },
  };
};

/** An authorization header of the endpoint's own is the token's place once it has client credentials. */
function requireNoAuthorization(headerNames: string[], hasAuth: boolean) {
  if (!hasAuth || !headerNames.includes('authorization')) return;
  const detail = 'authorization carries the OAuth token of auth: remove the header or the credentials';
  throw new PlatformError('VALIDATION_FAILED', detail, {
    errors: [{ pointer: '/headers/authorization', detail }],
  });
}
