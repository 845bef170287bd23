// An in-process service on a fresh database, listening on loopback: tests talk to it through HTTP.
import { after } from 'node:test';
import pino from 'pino';
import { auditInto } from '../../src/audit/store.ts';
import { createLogger } from '../../src/cli/runtime.ts';
import type { Context } from '../../src/context.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import type { DeliveryWorker } from '../../src/delivery/worker.ts';
import { subjectContext } from '../../src/erasure/asking.ts';
import type { App } from '../../src/http/app.ts';
import { OPERATOR_SCOPES, type OperatorScope, SCOPES } from '../../src/keys/scopes.ts';
import { keyService } from '../../src/keys/service.ts';
import type { Clock } from '../../src/lib/clock.ts';
import { loadConfig } from '../../src/lib/config.ts';
import { parseKeyring, seal } from '../../src/lib/crypto.ts';
import { projectService } from '../../src/projects/service.ts';
import type { CapabilityRegistry } from '../../src/registry.ts';
import { createService } from '../../src/service.ts';
import { servicesOf } from '../../src/services.ts';
import type { Resolver } from '../../src/webhooks/address-policy.ts';
import { createMigratedDatabase } from './database.ts';

export interface TestService {
  baseUrl: string;
  app: App;
  db: Database;
  context: Context;
  worker: DeliveryWorker | undefined;
  /** the metrics listener (http://host:port), when PLATFORM_METRICS_PORT is set */
  metricsAddress: string | undefined;
  /** A new project and a key for it (every scope of Core unless scopes are given: a capability's by name). */
  tenant(scopes?: readonly string[], mode?: 'test' | 'live'): Promise<Tenant>;
  /**
   * An erasure of the tenant's (through HTTP) with a pulled task of the capability's, as if the capability
   * had asked to be told when it was made (so that the tenant's erasures need not wait for it). Its id.
   */
  erasureWithTask(tenant: Tenant, capability: string): Promise<string>;
  /** An operator's key (every operator scope unless scopes are given). */
  operator(scopes?: readonly OperatorScope[]): Promise<{ key: string; keyId: string }>;
  /**
   * A capability registered as an operator would, with its first key and signing secret, and the manifest
   * when one is given (put as the capability would), read into the registry at once.
   */
  capability(
    name: string,
    options?: { manifest?: unknown; upstream?: string; erasureUrl?: string },
  ): Promise<{ name: string; key: string; keyId: string; signingSecret: string }>;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
}

export interface Tenant {
  projectId: string;
  slug: string;
  key: string;
  keyId: string;
}

export interface RequestOptions {
  key?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** a raw body sent as is (with its own content-type header) */
  rawBody?: string | Buffer;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

let tenants = 0;

/** The master key of every test service (a fixed test value, never a real one). */
export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

export async function startService(
  options: {
    env?: Record<string, string>;
    registry?: CapabilityRegistry;
    databaseUrl?: string;
    /** where log lines go (to inspect them); silent when not given */
    logTo?: NodeJS.WritableStream;
    clock?: Clock;
    resolve?: Resolver;
    /** run a delivery worker in the same process (its own resolver may differ from the API's) */
    worker?: boolean | { resolve?: Resolver; env?: Record<string, string> };
    setup?: (app: App) => void;
  } = {},
): Promise<TestService> {
  const created = options.databaseUrl ? undefined : await createMigratedDatabase();
  const databaseUrl = options.databaseUrl ?? (created?.url as string);
  const logLevel = options.logTo ? 'info' : 'silent';
  // A test service stops at once (a deployment keeps answering for a second first: http/drain.ts).
  const base = { PLATFORM_LOG_LEVEL: logLevel, PLATFORM_SHUTDOWN_DELAY_MS: '0' };
  const config = loadConfig({ ...base, ...options.env, DATABASE_URL: databaseUrl });
  const db = openDatabase(databaseUrl, { max: config.databasePoolSize });
  await migrate(db);
  const shared = {
    config,
    db,
    keyring: parseKeyring(TEST_ENCRYPTION_KEY),
    clock: options.clock,
    resolve: options.resolve,
    log: options.logTo ? createLogger(config, options.logTo) : pino({ level: 'silent' }),
  };
  // A worker with its own resolver or settings runs as a service of its own on the same database, as a
  // `platform worker` process would (woken by NOTIFY rather than in-process).
  const own = typeof options.worker === 'object' ? options.worker : undefined;
  const service = await createService({
    ...shared,
    registry: options.registry,
    api: true,
    worker: options.worker === true,
  });
  const app = service.app as App;
  options.setup?.(app);
  const address = (await service.start({ port: 0, host: '127.0.0.1' })) as string;
  const workerService = own
    ? await createService({
        ...shared,
        config: loadConfig({
          ...base,
          ...options.env,
          ...own.env,
          DATABASE_URL: databaseUrl,
        }),
        resolve: own.resolve ?? options.resolve,
        api: false,
        worker: true,
      })
    : undefined;
  await workerService?.start();
  const { context } = service;
  // One hook, in order: the worker and the API stop before their database goes.
  after(async () => {
    await workerService?.stop();
    await service.stop();
    await db.close();
    await created?.drop();
  });

  const request = async (method: string, path: string, req: RequestOptions = {}): Promise<TestResponse> => {
    const headers: Record<string, string> = { ...req.headers };
    if (req.key !== undefined) headers['x-api-key'] = req.key;
    let body: string | Buffer | undefined;
    if (req.rawBody !== undefined) body = req.rawBody;
    else if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${address}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  };

  return {
    baseUrl: address,
    app,
    worker: workerService?.worker ?? service.worker,
    metricsAddress: service.metricsAddress,
    db,
    context,
    request,
    tenant: (scopes = SCOPES, mode = 'test') =>
      db.transaction(async (tx, hooks) => {
        const slug = `p${++tenants}-${process.pid}`;
        const audit = auditInto({ actor: { type: 'cli' }, requestId: `test-${slug}` }, hooks);
        const work = { db: tx, hooks, audit };
        const project = await projectService(work).create({ slug, name: `Project ${slug}`, mode });
        const created = await keyService(work).create(project, { scopes: [...scopes] });
        return { projectId: project.id, slug, key: created.key, keyId: created.id };
      }),
    async capability(name, options = {}) {
      const created = await db.transaction(async (tx, hooks) => {
        const audit = auditInto({ actor: { type: 'cli' }, requestId: `test-capability-${name}` }, hooks);
        const work = { db: tx, hooks, audit };
        const capabilities = servicesOf(context, work).capabilities;
        const made = await capabilities.register({
          name,
          description: `The ${name} capability`,
          upstream: options.upstream,
          erasureUrl: options.erasureUrl,
        });
        if (options.manifest) await capabilities.putManifest(name, options.manifest as never);
        return made;
      });
      await context.directory.refresh();
      return { name, key: created.key, keyId: created.keyId, signingSecret: created.signingSecret };
    },
    async erasureWithTask(tenant, capability) {
      const subject = { type: 'external_id', value: `task-for-${capability}` };
      const erased = await request('POST', '/core/v1/subjects/erase', {
        key: tenant.key,
        body: { subject },
        headers: { 'idempotency-key': `erasure-task-${++tenants}` },
      });
      const erasureId = erased.body.erasureId as string;
      const sealed = seal(
        context.keyring,
        Buffer.from(JSON.stringify(subject)),
        subjectContext(erasureId, capability),
      );
      await db.query(
        `insert into erasure_tasks (project_id, erasure_id, capability, mode, sealed_subject)
         values ($1, $2, $3, 'pull', $4)`,
        [tenant.projectId, erasureId, capability, sealed],
      );
      return erasureId;
    },
    operator: (scopes = OPERATOR_SCOPES) =>
      db.transaction(async (tx, hooks) => {
        const audit = auditInto({ actor: { type: 'cli' }, requestId: 'test-operator' }, hooks);
        const created = await keyService({ db: tx, hooks, audit }).createOperator({ scopes: [...scopes] });
        return { key: created.key, keyId: created.id };
      }),
  };
}

/** Asserts a PlatformError response: status, code, problem+json, request id. */
export function expectProblem(response: TestResponse, status: number, code: string) {
  const where = `${response.status} ${response.text.slice(0, 300)}`;
  if (response.status !== status) throw new Error(`expected ${status} ${code}, got ${where}`);
  if (response.body?.code !== code) throw new Error(`expected code ${code}, got ${where}`);
  if (!response.headers.get('content-type')?.startsWith('application/problem+json')) {
    throw new Error(`expected application/problem+json, got ${response.headers.get('content-type')}`);
  }
  const requestId = response.headers.get('x-request-id');
  if (!requestId || response.body.requestId !== requestId)
    throw new Error(`requestId missing or different: ${where}`);
  if (
    response.body.status !== status ||
    typeof response.body.title !== 'string' ||
    typeof response.body.type !== 'string'
  ) {
    throw new Error(`not a problem document: ${where}`);
  }
  if (/\bat .+:\d+:\d+/.test(response.text)) throw new Error(`a stack trace leaked: ${where}`);
}
