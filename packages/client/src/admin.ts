// An operator's client: the management API (/admin/v1), with an operator's key (pk_op_…). Same calls,
// retries and errors as PlatformClient.
import {
  type Body,
  type CallOptions,
  type ClientOptions,
  paginate,
  type Query,
  Transport,
} from './transport.ts';

const PROJECT = '/admin/v1/projects/{id}';
const LIMIT = '/admin/v1/projects/{id}/limits/{capability}/{metric}';
const CAPABILITY = '/admin/v1/capabilities/{name}';

export class PlatformAdminClient {
  readonly #t: Transport;

  constructor(options: ClientOptions) {
    this.#t = new Transport(options);
  }

  readonly projects = {
    create: (body: Body<'/admin/v1/projects', 'post'>, o?: CallOptions) =>
      this.#t.call('post', '/admin/v1/projects', { body }, o),
    list: (query: Query<'/admin/v1/projects', 'get'> = {}, o?: CallOptions) =>
      this.#t.call('get', '/admin/v1/projects', { query }, o),
    iterate: (query: Omit<Query<'/admin/v1/projects', 'get'>, 'cursor'> = {}, o?: CallOptions) =>
      paginate((cursor) => this.projects.list({ ...query, cursor }, o)),
    get: (id: string, o?: CallOptions) => this.#t.call('get', PROJECT, { params: { id } }, o),
    /** A JSON merge patch: name, languages, theme, retentionDays, portalFrameAncestors. */
    update: (id: string, body: Body<typeof PROJECT, 'patch'>, o?: CallOptions) =>
      this.#t.call('patch', PROJECT, { params: { id }, body }, o),
    /** The project's usage by UTC day, capability and metric, with its daily limits. */
    usage: (id: string, query: Query<`${typeof PROJECT}/usage`, 'get'> = {}, o?: CallOptions) =>
      this.#t.call('get', `${PROJECT}/usage`, { params: { id }, query }, o),
  };

  readonly keys = {
    /** A key of the project (shown once, in the answer's `key`). */
    create: (projectId: string, body: Body<`${typeof PROJECT}/keys`, 'post'>, o?: CallOptions) =>
      this.#t.call('post', `${PROJECT}/keys`, { params: { id: projectId }, body }, o),
    list: (projectId: string, query: Query<`${typeof PROJECT}/keys`, 'get'> = {}, o?: CallOptions) =>
      this.#t.call('get', `${PROJECT}/keys`, { params: { id: projectId }, query }, o),
    iterate: (projectId: string, o?: CallOptions) =>
      paginate((cursor) => this.keys.list(projectId, { cursor }, o)),
    revoke: (keyId: string, o?: CallOptions) =>
      this.#t.call('post', '/admin/v1/keys/{id}/revoke', { params: { id: keyId } }, o),
  };

  readonly limits = {
    /** The project's daily limits: its own and the installation's defaults. */
    list: (projectId: string, o?: CallOptions) =>
      this.#t.call('get', `${PROJECT}/limits`, { params: { id: projectId } }, o),
    set: (limit: LimitName, body: Body<typeof LIMIT, 'put'>, o?: CallOptions) =>
      this.#t.call('put', LIMIT, { params: { ...limit, id: limit.projectId }, body }, o),
    /** Back to the installation's default. */
    clear: (limit: LimitName, o?: CallOptions) =>
      this.#t.call('delete', LIMIT, { params: { ...limit, id: limit.projectId } }, o),
  };

  /** Products that plug in as capabilities (their key and signing secret are shown once, at creation). */
  readonly capabilities = {
    create: (body: Body<'/admin/v1/capabilities', 'post'>, o?: CallOptions) =>
      this.#t.call('post', '/admin/v1/capabilities', { body }, o),
    list: (o?: CallOptions) => this.#t.call('get', '/admin/v1/capabilities', {}, o),
    /** With the breaker reports of its live instances. */
    get: (name: string, o?: CallOptions) => this.#t.call('get', CAPABILITY, { params: { name } }, o),
    /** A JSON merge patch: description, upstream, erasureUrl (where its traffic goes: the operator's call). */
    update: (name: string, body: Body<typeof CAPABILITY, 'patch'>, o?: CallOptions) =>
      this.#t.call('patch', CAPABILITY, { params: { name }, body }, o),
    createKey: (name: string, o?: CallOptions) =>
      this.#t.call('post', `${CAPABILITY}/keys`, { params: { name } }, o),
    rotateSigningSecret: (name: string, o?: CallOptions) =>
      this.#t.call('post', `${CAPABILITY}/rotate-signing-secret`, { params: { name } }, o),
    retirePreviousSigningSecret: (name: string, o?: CallOptions) =>
      this.#t.call('post', `${CAPABILITY}/retire-previous-signing-secret`, { params: { name } }, o),
    /** The capability leaves: its keys, routes, providers and pending erasure tasks go; its history stays. */
    remove: (name: string, o?: CallOptions) => this.#t.call('delete', CAPABILITY, { params: { name } }, o),
  };

  readonly audit = {
    list: (query: Query<'/admin/v1/audit', 'get'> = {}, o?: CallOptions) =>
      this.#t.call('get', '/admin/v1/audit', { query }, o),
    iterate: (query: Omit<Query<'/admin/v1/audit', 'get'>, 'cursor'> = {}, o?: CallOptions) =>
      paginate((cursor) => this.audit.list({ ...query, cursor }, o)),
  };
}

export interface LimitName {
  projectId: string;
  capability: string;
  metric: string;
}
