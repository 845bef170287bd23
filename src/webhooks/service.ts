// Webhook endpoints and the state machine of their signing secrets (spec section 3): one active secret,
// plus a previous one while a rotation is under way (secrets.ts makes and seals them).
import { randomUUID } from 'node:crypto';
import type { Audit } from '../audit/store.ts';
import type { Keyring } from '../crypto.ts';
import type { Db } from '../db/database.ts';
import { notFound, PlatformError } from '../errors.ts';
import { checkWebhookUrl, type UrlCheckOptions } from './address-policy.ts';
import { newSecret } from './secrets.ts';
import { cancelPending, ENDPOINTS_PER_PROJECT, type EndpointRow, endpointStore } from './store.ts';

export interface WebhookEndpoint {
  id: string;
  url: string;
  eventTypes: string[];
  active: boolean;
  hasPreviousSecret: boolean;
  createdAt: string;
}

const toRecord = (row: EndpointRow): WebhookEndpoint => ({
  id: row.id,
  url: row.url,
  eventTypes: row.event_types,
  active: row.active,
  hasPreviousSecret: row.has_previous_secret,
  createdAt: row.created_at.toISOString(),
});

export interface EndpointDeps {
  keyring: Keyring;
  /** where webhooks may go: see address-policy.ts */
  addresses: UrlCheckOptions;
}

export const webhookEndpointService = (db: Db, deps: EndpointDeps) => {
  const store = endpointStore(db);
  const { keyring } = deps;

  return {
    /**
     * Checks the address (resolving its host name) before the first statement, so no database connection
     * waits on DNS; an idempotent request's claim still comes before the refusal (idempotency/pipeline.ts).
     */
    async create(projectId: string, input: { url: string; eventTypes: string[] }, audit: Audit) {
      await requireAllowedUrl(input.url, deps.addresses);
      const id = randomUUID();
      const secret = newSecret(keyring, id);
      const row = await store.insertWithinLimit(projectId, { id, ...input, sealedSecret: secret.sealed });
      if (!row) {
        throw new PlatformError(
          'WEBHOOK_ENDPOINT_LIMIT_REACHED',
          `a project can have at most ${ENDPOINTS_PER_PROJECT} webhook endpoints`,
        );
      }
      audit({
        action: 'endpoint.created',
        projectId,
        target: { type: 'endpoint', id },
        fields: ['url', 'eventTypes'],
      });
      return { ...toRecord(row), secret: secret.clear };
    },

    list: async (projectId: string) => (await store.list(projectId)).map(toRecord),

    /** Deletes the endpoint and its secrets; its pending deliveries are cancelled (their history stays). */
    async delete(projectId: string, id: string, audit: Audit) {
      if (!(await store.delete(projectId, id))) throw notFound('webhook endpoint');
      await cancelPending(db, projectId, id, 'endpoint deleted');
      audit({ action: 'endpoint.deleted', projectId, target: { type: 'endpoint', id } });
    },

    async rotateSecret(projectId: string, id: string, audit: Audit) {
      const secret = newSecret(keyring, id);
      if (!(await store.rotate(projectId, id, secret.sealed))) throw notFound('webhook endpoint');
      audit({
        action: 'endpoint.secret_rotated',
        projectId,
        target: { type: 'endpoint', id },
        fields: ['secret'],
      });
      return { id, secret: secret.clear };
    },

    async retirePreviousSecret(projectId: string, id: string, audit: Audit) {
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

async function requireAllowedUrl(url: string, options: UrlCheckOptions) {
  const verdict = await checkWebhookUrl(url, options);
  if (!verdict.allowed) {
    throw new PlatformError('WEBHOOK_URL_NOT_ALLOWED', verdict.reason, {
      errors: [{ pointer: '/url', detail: verdict.reason }],
    });
  }
}
