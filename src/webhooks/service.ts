// Webhook endpoints and the state machine of their signing secrets (spec section 3): one active secret,
// plus a previous one while a rotation is under way. Secrets are `whsec_` + base64 of 32 random bytes,
// returned in clear once (at creation and rotation) and kept only sealed.
import { randomBytes, randomUUID } from 'node:crypto';
import { type Keyring, seal, unseal } from '../crypto.ts';
import type { Db } from '../db/database.ts';
import { notFound, PlatformError } from '../errors.ts';
import { ENDPOINTS_PER_PROJECT, type EndpointRow, endpointStore } from './store.ts';

export interface WebhookEndpoint {
  id: string;
  url: string;
  eventTypes: string[];
  active: boolean;
  hasPreviousSecret: boolean;
  createdAt: string;
}

const SECRET_PREFIX = 'whsec_';

const toRecord = (row: EndpointRow): WebhookEndpoint => ({
  id: row.id,
  url: row.url,
  eventTypes: row.event_types,
  active: row.active,
  hasPreviousSecret: row.has_previous_secret,
  createdAt: row.created_at.toISOString(),
});

/** The sealing context binds a sealed secret to its endpoint: it cannot be moved to another. */
const secretContext = (endpointId: string) => `webhook-secret:${endpointId}`;

export const webhookEndpointService = (db: Db, keyring: Keyring) => {
  const store = endpointStore(db);
  const newSecret = (endpointId: string) => {
    const bytes = randomBytes(32);
    return {
      clear: `${SECRET_PREFIX}${bytes.toString('base64')}`,
      sealed: seal(keyring, bytes, secretContext(endpointId)),
    };
  };

  return {
    /** The URL must already have passed the address policy (it resolves outside any transaction). */
    async create(projectId: string, input: { url: string; eventTypes: string[] }) {
      const id = randomUUID();
      const secret = newSecret(id);
      const row = await store.insertWithinLimit(projectId, { id, ...input, sealedSecret: secret.sealed });
      if (!row) {
        throw new PlatformError(
          'WEBHOOK_ENDPOINT_LIMIT_REACHED',
          `a project can have at most ${ENDPOINTS_PER_PROJECT} webhook endpoints`,
        );
      }
      return { ...toRecord(row), secret: secret.clear };
    },

    list: async (projectId: string) => (await store.list(projectId)).map(toRecord),

    async delete(projectId: string, id: string) {
      if (!(await store.delete(projectId, id))) throw notFound('webhook endpoint');
    },

    async rotateSecret(projectId: string, id: string) {
      const secret = newSecret(id);
      if (!(await store.rotate(projectId, id, secret.sealed))) throw notFound('webhook endpoint');
      return { id, secret: secret.clear };
    },

    async retirePreviousSecret(projectId: string, id: string) {
      const row = await store.retirePrevious(projectId, id);
      if (!row) throw notFound('webhook endpoint');
      return toRecord(row);
    },

    /** For the delivery worker: the HMAC keys that sign for this endpoint, active first. Nothing broader. */
    async signingSecrets(projectId: string, id: string): Promise<Buffer[]> {
      const sealed = await store.sealedSecrets(projectId, id);
      return sealed ? signingKeys(keyring, id, sealed.active_secret, sealed.previous_secret) : [];
    },
  };
};

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

/** The HMAC key a `whsec_` secret stands for. */
export const secretKey = (secret: string) => Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
