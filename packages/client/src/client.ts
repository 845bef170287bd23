// A project's client: one method per operation of the API a project's key calls, grouped by resource.
// Writes take an optional last argument (CallOptions: idempotencyKey, signal, timeoutMs, maxRetries);
// lists by cursor have a list… (one page) and an iterate… (every item, page after page).
import {
  type Body,
  type CallOptions,
  type ClientOptions,
  paginate,
  type Query,
  Transport,
} from './transport.ts';

const ENDPOINT = '/core/v1/webhook-endpoints/{id}';
type DeliveriesPath = `${typeof ENDPOINT}/deliveries`;
const DESTINATION = '/core/v1/destinations/{id}';

export class PlatformClient {
  readonly #t: Transport;

  constructor(options: ClientOptions) {
    this.#t = new Transport(options);
  }

  readonly health = {
    /** The service's health (any valid key); a 503 while its database is down. */
    get: (o?: CallOptions) => this.#t.call('get', '/api/health', {}, o),
    live: (o?: CallOptions) => this.#t.call('get', '/livez', {}, o),
    ready: (o?: CallOptions) => this.#t.call('get', '/readyz', {}, o),
  };

  readonly projects = {
    /** The key's project, with its languages and theme. */
    me: (o?: CallOptions) => this.#t.call('get', '/core/v1/projects/me', {}, o),
  };

  readonly events = {
    publish: (body: Body<'/core/v1/events', 'post'>, o?: CallOptions) =>
      this.#t.call('post', '/core/v1/events', { body }, o),
    /** One page of the project's events, newest first, each with its deliveries counted by state. */
    list: (query: Query<'/core/v1/events', 'get'> = {}, o?: CallOptions) =>
      this.#t.call('get', '/core/v1/events', { query }, o),
    /** Every event of the project that the query keeps, newest first (`for await … of`). */
    iterate: (query: Omit<Query<'/core/v1/events', 'get'>, 'cursor'> = {}, o?: CallOptions) =>
      paginate((cursor) => this.events.list({ ...query, cursor }, o)),
    get: (id: string, o?: CallOptions) => this.#t.call('get', '/core/v1/events/{id}', { params: { id } }, o),
    replay: (id: string, o?: CallOptions) =>
      this.#t.call('post', '/core/v1/events/{id}/replay', { params: { id } }, o),
  };

  readonly eventTypes = {
    list: (o?: CallOptions) => this.#t.call('get', '/core/v1/event-types', {}, o),
    put: (name: string, body: Body<'/core/v1/event-types/{name}', 'put'>, o?: CallOptions) =>
      this.#t.call('put', '/core/v1/event-types/{name}', { params: { name }, body }, o),
    delete: (name: string, o?: CallOptions) =>
      this.#t.call('delete', '/core/v1/event-types/{name}', { params: { name } }, o),
  };

  readonly webhookEndpoints = {
    create: (body: Body<'/core/v1/webhook-endpoints', 'post'>, o?: CallOptions) =>
      this.#t.call('post', '/core/v1/webhook-endpoints', { body }, o),
    list: (o?: CallOptions) => this.#t.call('get', '/core/v1/webhook-endpoints', {}, o),
    get: (id: string, o?: CallOptions) => this.#t.call('get', ENDPOINT, { params: { id } }, o),
    /** A JSON merge patch: url, eventTypes, rateLimitPerSecond, ordering, active, name, description; metadata and headers merge (null removes). */
    update: (id: string, body: Body<typeof ENDPOINT, 'patch'>, o?: CallOptions) =>
      this.#t.call('patch', ENDPOINT, { params: { id }, body }, o),
    delete: (id: string, o?: CallOptions) => this.#t.call('delete', ENDPOINT, { params: { id } }, o),
    pause: (id: string, o?: CallOptions) => this.#t.call('post', `${ENDPOINT}/pause`, { params: { id } }, o),
    resume: (id: string, o?: CallOptions) =>
      this.#t.call('post', `${ENDPOINT}/resume`, { params: { id } }, o),
    cancelPending: (id: string, o?: CallOptions) =>
      this.#t.call('post', `${ENDPOINT}/cancel-pending`, { params: { id } }, o),
    /** A new active secret (shown once); the previous one keeps signing until retired. */
    rotateSecret: (id: string, o?: CallOptions) =>
      this.#t.call('post', `${ENDPOINT}/rotate-secret`, { params: { id } }, o),
    retirePreviousSecret: (id: string, o?: CallOptions) =>
      this.#t.call('post', `${ENDPOINT}/retire-previous-secret`, { params: { id } }, o),
    /** A signed test event to this endpoint only: core.webhook.test, or `{ eventType }`'s example. */
    sendTest: (id: string, body: Body<`${typeof ENDPOINT}/test`, 'post'> = {}, o?: CallOptions) =>
      this.#t.call('post', `${ENDPOINT}/test`, { params: { id }, body }, o),
    /** Sends again, as a job, the events whose latest delivery is in the given states (dryRun: count). */
    recover: (id: string, body: Body<`${typeof ENDPOINT}/recover`, 'post'>, o?: CallOptions) =>
      this.#t.call('post', `${ENDPOINT}/recover`, { params: { id }, body }, o),
    /** Its attempts in each of the last 24 hours, succeeded and failed. */
    stats: (id: string, o?: CallOptions) => this.#t.call('get', `${ENDPOINT}/stats`, { params: { id } }, o),
    /** One page of the endpoint's deliveries, newest first, with their attempts. */
    listDeliveries: (id: string, query: Query<DeliveriesPath, 'get'> = {}, o?: CallOptions) =>
      this.#t.call('get', `${ENDPOINT}/deliveries`, { params: { id }, query }, o),
    /** Every delivery of the endpoint, newest first (`for await … of`). */
    iterateDeliveries: (
      id: string,
      query: Omit<Query<DeliveriesPath, 'get'>, 'cursor'> = {},
      o?: CallOptions,
    ) => paginate((cursor) => this.webhookEndpoints.listDeliveries(id, { ...query, cursor }, o)),
  };

  /**
   * Destinations (a webhook, a RabbitMQ exchange, a Redis stream, a NATS subject, or a feed to poll): the
   * same operations as a webhook endpoint's, and a polling destination's messages.
   */
  readonly destinations = {
    create: (body: Body<'/core/v1/destinations', 'post'>, o?: CallOptions) =>
      this.#t.call('post', '/core/v1/destinations', { body }, o),
    list: (o?: CallOptions) => this.#t.call('get', '/core/v1/destinations', {}, o),
    get: (id: string, o?: CallOptions) => this.#t.call('get', DESTINATION, { params: { id } }, o),
    /** A JSON merge patch: target merges into the target (a new url replaces its password); the rest as an endpoint's. */
    update: (id: string, body: Body<typeof DESTINATION, 'patch'>, o?: CallOptions) =>
      this.#t.call('patch', DESTINATION, { params: { id }, body }, o),
    delete: (id: string, o?: CallOptions) => this.#t.call('delete', DESTINATION, { params: { id } }, o),
    pause: (id: string, o?: CallOptions) =>
      this.#t.call('post', `${DESTINATION}/pause`, { params: { id } }, o),
    resume: (id: string, o?: CallOptions) =>
      this.#t.call('post', `${DESTINATION}/resume`, { params: { id } }, o),
    cancelPending: (id: string, o?: CallOptions) =>
      this.#t.call('post', `${DESTINATION}/cancel-pending`, { params: { id } }, o),
    rotateSecret: (id: string, o?: CallOptions) =>
      this.#t.call('post', `${DESTINATION}/rotate-secret`, { params: { id } }, o),
    retirePreviousSecret: (id: string, o?: CallOptions) =>
      this.#t.call('post', `${DESTINATION}/retire-previous-secret`, { params: { id } }, o),
    sendTest: (id: string, body: Body<`${typeof DESTINATION}/test`, 'post'> = {}, o?: CallOptions) =>
      this.#t.call('post', `${DESTINATION}/test`, { params: { id }, body }, o),
    recover: (id: string, body: Body<`${typeof DESTINATION}/recover`, 'post'>, o?: CallOptions) =>
      this.#t.call('post', `${DESTINATION}/recover`, { params: { id }, body }, o),
    stats: (id: string, o?: CallOptions) =>
      this.#t.call('get', `${DESTINATION}/stats`, { params: { id } }, o),
    listDeliveries: (
      id: string,
      query: Query<`${typeof DESTINATION}/deliveries`, 'get'> = {},
      o?: CallOptions,
    ) => this.#t.call('get', `${DESTINATION}/deliveries`, { params: { id }, query }, o),
    /**
     * A polling destination's messages after `cursor`, in delivery order. Keep `nextCursor` and poll with
     * it: an empty page answers the cursor it was given.
     */
    listMessages: (id: string, query: Query<`${typeof DESTINATION}/messages`, 'get'> = {}, o?: CallOptions) =>
      this.#t.call('get', `${DESTINATION}/messages`, { params: { id }, query }, o),
  };

  readonly deliveries = {
    /** A dead delivery tried once more, or a waiting one tried now. */
    retry: (id: string, o?: CallOptions) =>
      this.#t.call('post', '/core/v1/deliveries/{id}/retry', { params: { id } }, o),
  };

  readonly jobs = {
    get: (id: string, o?: CallOptions) => this.#t.call('get', '/core/v1/jobs/{id}', { params: { id } }, o),
  };

  readonly usage = {
    /** Counts by day and metric (from, to: YYYY-MM-DD, UTC), with the daily limits. */
    get: (query: Query<'/core/v1/usage', 'get'> = {}, o?: CallOptions) =>
      this.#t.call('get', '/core/v1/usage', { query }, o),
  };

  readonly portalSessions = {
    /** A session of the developers' portal, and the one-time link (`url`) that opens it. */
    create: (body: Body<'/core/v1/portal-sessions', 'post'> = {}, o?: CallOptions) =>
      this.#t.call('post', '/core/v1/portal-sessions', { body }, o),
    list: (query: Query<'/core/v1/portal-sessions', 'get'> = {}, o?: CallOptions) =>
      this.#t.call('get', '/core/v1/portal-sessions', { query }, o),
    iterate: (o?: CallOptions) => paginate((cursor) => this.portalSessions.list({ cursor }, o)),
    revoke: (id: string, o?: CallOptions) =>
      this.#t.call('delete', '/core/v1/portal-sessions/{id}', { params: { id } }, o),
  };

  readonly subjects = {
    /**
     * Erases a person (email, phone or external_id) from every capability: 200 when every capability
     * answered within 10 s, else 202 with those `pending` (follow them with `erasure(erasureId)`).
     */
    erase: (body: Body<'/core/v1/subjects/erase', 'post'>, o?: CallOptions) =>
      this.#t.call('post', '/core/v1/subjects/erase', { body }, o),
    /** An erasure: its state, and each capability's. */
    erasure: (id: string, o?: CallOptions) =>
      this.#t.call('get', '/core/v1/erasures/{id}', { params: { id } }, o),
  };
}
