// Destinations (contract 0.4): a webhook endpoint, or a broker's exchange, stream or subject, or a feed to
// poll, on the same delivery engine. A destination is made, listed and changed here; everything else it
// shares with a webhook endpoint (its secrets, pause, tests, deliveries) is the endpoint service's, by id.
import type { Work } from '../audit/work.ts';
import { feedStore } from '../delivery-store/feed.ts';
import { notFound, PlatformError } from '../lib/errors.ts';
import { requireAllowedUrl } from './address-policy.ts';
import {
  type EndpointDeps,
  type EndpointPatch,
  type ReceiverInput,
  webhookEndpointService,
} from './service.ts';
import { endpointStore } from './store.ts';
import {
  type ClearTarget,
  checkBrokerTarget,
  type DestinationType,
  sealPassword,
  type TargetInput,
} from './targets.ts';

/** What each type's target may name (anything else is refused, naming what it takes). */
const NAMED: Record<DestinationType, (keyof TargetInput)[]> = {
  webhook: ['url'],
  rabbitmq: ['url', 'exchange', 'routingKey'],
  redis: ['url', 'stream', 'maxLen'],
  nats: ['url', 'subject'],
  polling: [],
};

export type DestinationInput = {
  type: DestinationType;
  target: TargetInput;
  eventTypes: string[];
} & ReceiverInput;
export type DestinationPatch = Omit<EndpointPatch, 'url'> & { target?: TargetInput };

/** A feed's cursor as its consumer holds it: opaque, base64url of "xid.seq". */
const START = { xid: '0', seq: '0' };
const encodeCursor = (at: { xid: string; seq: string }) =>
  Buffer.from(`${at.xid}.${at.seq}`).toString('base64url');
function decodeCursor(cursor: string | undefined) {
  if (cursor === undefined) return START;
  const match = /^(\d{1,20})\.(\d{1,20})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!match) {
    throw invalid(
      '/cursor',
      'the cursor is not one this feed gave: pass the nextCursor of the page before, or none',
    );
  }
  return { xid: match[1] as string, seq: match[2] as string };
}

export const destinationService = (work: Work, deps: EndpointDeps) => {
  const endpoints = webhookEndpointService(work, deps);
  const store = endpointStore(work.db);

  /** The target checked for its type: a webhook's URL is the endpoint's; a broker's host passes the policy. */
  async function checked(type: Exclude<DestinationType, 'webhook'>, target: TargetInput) {
    requireNamed(type, target);
    if (type === 'polling') return { type, clear: {} as ClearTarget, password: null };
    return { type, ...(await checkBrokerTarget(type, target, deps.addresses)) };
  }

  return {
    async create(projectId: string, input: DestinationInput) {
      const { type, target, ...rest } = input;
      requireNamed(type, target);
      if (type === 'webhook') {
        if (target.url === undefined) throw invalid('/target/url', 'a webhook target names its url');
        await requireAllowedUrl(target.url, deps.addresses, '/target/url');
        return endpoints.create(projectId, { ...rest, url: target.url });
      }
      const broker = await checked(type, target);
      return endpoints.create(projectId, { ...rest, url: broker.clear.url ?? '' }, broker);
    },

    list: (projectId: string) => endpoints.list(projectId),

    get: (projectId: string, id: string) => endpoints.get(projectId, id),

    /**
     * A merge patch: a target merges into the destination's (its URL, with its password, replaced only when
     * given); a webhook's target is its url.
     */
    async update(projectId: string, id: string, patch: DestinationPatch) {
      const { target, ...rest } = patch;
      if (target === undefined) return endpoints.update(projectId, id, rest);
      const current = await store.targetOf(projectId, id);
      if (!current) throw notFound('destination');
      const type = current.destination_type;
      requireNamed(type, target);
      if (type === 'webhook') {
        if (target.url !== undefined) await requireAllowedUrl(target.url, deps.addresses, '/target/url');
        return endpoints.update(projectId, id, { ...rest, url: target.url });
      }
      if (type !== 'polling') {
        const kept = current.target as ClearTarget;
        const { hasPassword: _, url: keptUrl, ...names } = kept;
        const merged = { ...names, url: keptUrl, ...target };
        const broker = await checked(type, merged);
        const sealed =
          target.url === undefined
            ? current.target_secret_sealed
            : broker.password === null
              ? null
              : sealPassword(deps.keyring, id, broker.password);
        const clear = { ...broker.clear, hasPassword: sealed !== null };
        await store.setTarget(projectId, id, { type, clear, sealed });
        work.audit({
          action: 'endpoint.updated',
          projectId,
          target: { type: 'endpoint', id },
          fields: ['target'],
        });
      }
      return endpoints.update(projectId, id, rest);
    },

    /** A polling destination's messages after the cursor, in feed order, as the answer's JSON text. */
    async messages(projectId: string, id: string, cursor: string | undefined, limit: number) {
      const after = decodeCursor(cursor);
      const current = await store.targetOf(projectId, id);
      if (!current) throw notFound('destination');
      if (current.destination_type !== 'polling') {
        throw notFound(`feed: this is a ${current.destination_type} destination, and only a polling one has`);
      }
      const page = await feedStore(work.db).read(projectId, id, after, limit);
      const next = encodeCursor(page.last ?? after);
      return `{"data":[${page.entries}],"nextCursor":"${next}"}`;
    },
  };
};

function requireNamed(type: DestinationType, target: TargetInput) {
  const takes = NAMED[type];
  const stray = Object.keys(target).find((name) => !takes.includes(name as keyof TargetInput));
  if (stray === undefined) return;
  throw invalid(
    `/target/${stray}`,
    `a ${type} target takes ${takes.length ? takes.join(', ') : 'nothing'}, not ${stray}`,
  );
}

const invalid = (pointer: string, detail: string) =>
  new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer, detail }] });
