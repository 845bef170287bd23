// The one place that wires the HTTP API: Fastify with per-route JSON schemas (validation, serialisation
// and OpenAPI from the same TypeBox schemas), one auth hook, one error handler, one not-found handler.
import { randomUUID } from 'node:crypto';
import { AjvCompiler, type RouteDefinition } from '@fastify/ajv-compiler';
import {
  type RouteDefinition as ResponseDefinition,
  SerializerSelector,
} from '@fastify/fast-json-stringify-compiler';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  LogController,
} from 'fastify';
import { readOnly, type Work } from '../audit/work.ts';
import type { Context } from '../context.ts';
import { PlatformError, problemBody } from '../lib/errors.ts';
import type { Services } from '../services.ts';
import { registerAuth } from './auth.ts';
import { registerBodyParsers } from './body.ts';
import { clientErrorHandler } from './client-errors.ts';
import { type Drain, registerDrain } from './drain.ts';
import { toPlatformError } from './fault.ts';
import { registerGateway } from './gateway.ts';
import { registerIdempotency } from './idempotency.ts';
import { registerRequestLimits } from './limits.ts';
import { lingerAfterRefusal } from './linger.ts';
import { registerRequestMetrics } from './metrics.ts';
import { openapiOptions, securityOf } from './openapi.ts';
import { errorsPage, ProblemSchema } from './problems.ts';
import { adminAuditRoutes } from './routes/admin/audit.ts';
import { adminCapabilityRoutes } from './routes/admin/capabilities.ts';
import { adminCapabilityRemovalRoutes } from './routes/admin/capability-removal.ts';
import { adminCapabilitySecretRoutes } from './routes/admin/capability-secrets.ts';
import { adminKeyRoutes } from './routes/admin/keys.ts';
import { adminLimitRoutes } from './routes/admin/limits.ts';
import { adminProjectRoutes } from './routes/admin/projects.ts';
import { breakerRoutes } from './routes/capability/breakers.ts';
import { erasureTaskRoutes } from './routes/capability/erasure.ts';
import { capabilityEventRoutes } from './routes/capability/events.ts';
import { meteringRoutes } from './routes/capability/metering.ts';
import { capabilityPlaneRoutes } from './routes/capability/plane.ts';
import { capabilityProjectRoutes } from './routes/capability/projects.ts';
import { reservationRoutes } from './routes/capability/reservations.ts';
import { capabilityUsageRoutes } from './routes/capability/usage.ts';
import { deliveryRoutes } from './routes/deliveries.ts';
import { destinationMessageRoutes } from './routes/destination-messages.ts';
import { destinationRoutes } from './routes/destinations.ts';
import { endpointActionRoutes } from './routes/endpoint-actions.ts';
import { endpointSecretRoutes } from './routes/endpoint-secrets.ts';
import { endpointStatsRoutes } from './routes/endpoint-stats.ts';
import { endpointRoutes } from './routes/endpoints.ts';
import { eventSendRoutes } from './routes/event-sends.ts';
import { eventTypeRoutes } from './routes/event-types.ts';
import { eventRoutes } from './routes/events.ts';
import { healthRoutes } from './routes/health.ts';
import { portalAssetRoutes } from './routes/portal-assets.ts';
import { portalPageRoutes } from './routes/portal-pages.ts';
import { portalSessionCookieRoutes } from './routes/portal-session.ts';
import { portalSessionRoutes } from './routes/portal-sessions.ts';
import { projectRoutes } from './routes/projects.ts';
import { recoveryRoutes } from './routes/recovery.ts';
import { subjectRoutes } from './routes/subjects.ts';
import { usageRoutes } from './routes/usage.ts';
import { registerServices } from './services.ts';
import { registerWebhookOnly } from './webhook-only.ts';

export const BODY_LIMIT = 1024 * 1024;
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

export type App = FastifyInstance;

declare module 'fastify' {
  interface FastifyInstance {
    /** The API's graceful stop (see drain.ts). */
    drain: Drain;
  }
}

/** The API, its requests' services made by `servicesOf` (the composition root's, services.ts). */
export async function buildApp(context: Context, servicesOf: (work: Work) => Services): Promise<App> {
  const app = Fastify({
    loggerInstance: context.log as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    // A caller's own x-request-id is kept when it is sane, so its logs and ours line up.
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // One log line per request, written below with the request id, instead of Fastify's two lines from a
    // child logger made for every request (the child and its redaction showed up in the request profile).
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger) => logger,
    ajv: { customOptions: { coerceTypes: false, allErrors: true, removeAdditional: false } },
    // A query string is text, so its numbers are read as numbers (`?limit=20` is an integer 20); a body or
    // a header is taken as sent.
    schemaController: {
      compilersFactory: {
        buildValidator: queryCoercingValidator as never,
        buildSerializer: oneSerializerPerSchema,
      },
    },
    // Closing is drain.ts's: idle connections close when the listener does, busy ones after their answer.
    forceCloseConnections: 'idle',
    // Errors of Node's HTTP parser (before any request exists) in the same problem shape as the rest.
    clientErrorHandler: clientErrorHandler(context.log),
    // Errors Fastify raises before routing get the same problem body as all others: a malformed URL, and
    // a path segment longer than any name (256 characters), which names nothing, as any non-UUID id.
    frameworkErrors: (error, request, reply) => {
      const failure =
        // A `%` not followed by two hex digits: no path names a resource that way (contract 0.4's gateway
        // rule, applied to every route alike).
        error.code === 'FST_ERR_BAD_URL'
          ? new PlatformError(
              'NOT_FOUND',
              'no route: the path holds a `%` that is not followed by two hex digits',
            )
          : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
            ? new PlatformError('NOT_FOUND', 'no such resource')
            : toPlatformError(error);
      context.metrics.problem(failure.code);
      context.log.info(
        { requestId: request.id, method: request.method, status: failure.status, code: failure.code },
        'request refused before routing',
      );
      const answer = (reply as unknown as FastifyReply)
        .header('x-request-id', request.id)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'no-store');
      sendProblem(answer, failure, request.id);
    },
    return503OnClosing: false,
    // A path segment of up to 256 characters reaches its route, which holds it to its own form (event
    // types have up to 128); a longer one names nothing (404, below).
    routerOptions: { maxParamLength: 256 },
  });

  app.addSchema(ProblemSchema);
  // Each operation's security in the document is its access, read from the route itself.
  app.addHook('onRoute', (route) => {
    if (route.schema && !route.schema.hide) route.schema.security = securityOf(route.config?.access);
  });
  await app.register(swagger, openapiOptions(context.config.version));

  if (context.metrics.enabled) registerRequestMetrics(app, context.metrics);
  const log = context.log;
  if (log.isLevelEnabled('info')) {
    app.addHook('onResponse', (request, reply, done) => {
      log.info(
        {
          requestId: request.id,
          method: request.method,
          route: request.routeOptions.url ?? null,
          url: request.url.split('?')[0],
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 10) / 10,
        },
        'request',
      );
      done();
    });
  }

  // Set first thing, so every answer carries them (a route may still override cache-control).
  app.addHook('onRequest', (request, reply, done) => {
    reply
      .header('x-request-id', request.id)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-store');
    done();
  });

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const failure =
      error instanceof PlatformError ? error : toPlatformError(error, request.routeOptions.bodyLimit);
    context.metrics.problem(failure.code);
    if (failure.status >= 500) {
      // the one place a fault is logged with its stack; the body carries only the request id
      request.log.error({ err: error, requestId: request.id }, `request failed: ${failure.code}`);
    }
    // A route with an answer of its own to an outage (health, with a Health body) gives it instead.
    const { onOutage } = request.routeOptions.config;
    if (failure.code === 'SERVICE_UNAVAILABLE' && onOutage) {
      const { statusCode, body } = await onOutage(request);
      return reply.code(statusCode).send(body);
    }
    if (failure.status === 413) lingerAfterRefusal(request, reply);
    return sendProblem(reply, failure, request.id);
  });
  app.setNotFoundHandler((request) => {
    throw new PlatformError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`);
  });

  registerBodyParsers(app);
  app.decorate('drain', registerDrain(app));

  // Warm what requests would otherwise load lazily inside their transactions; a failure is retried on use.
  context.hashSubject.ready().catch(() => {});

  registerAuth(app, context.keys, context.keyActivity, (token) =>
    servicesOf(readOnly(context.db)).portal.check(token),
  );
  registerServices(app, context.db, servicesOf);
  registerRequestLimits(app, context.requestLimits);
  registerIdempotency(app, context);
  registerWebhookOnly(app, context.db);

  // Served with this service's own address, so that "Try it out" reaches it (the snapshot keeps the default).
  const located = (document: object) => ({
    ...document,
    servers: [{ url: publicUrl(app, context.config.publicUrl), description: 'this service' }],
  });
  app.get('/openapi.json', { config: { access: 'public' }, schema: { hide: true } }, () =>
    located(app.swagger()),
  );
  app.get('/docs/errors', { config: { access: 'public' }, schema: { hide: true } }, (_request, reply) =>
    reply.type('text/html; charset=utf-8').header('cache-control', 'public, max-age=300').send(errorsPage()),
  );
  await app.register(swaggerUi, { routePrefix: '/docs', transformSpecification: located });

  await app.register(healthRoutes(context));
  for (const plugin of [
    projectRoutes,
    subjectRoutes,
    endpointRoutes,
    endpointActionRoutes,
    endpointSecretRoutes,
    endpointStatsRoutes,
    destinationRoutes,
    destinationMessageRoutes,
    eventRoutes,
    eventSendRoutes,
    eventTypeRoutes,
    deliveryRoutes,
    recoveryRoutes,
    usageRoutes,
    portalSessionRoutes(() => publicUrl(app, context.config.publicUrl)),
    portalSessionCookieRoutes(context.config.publicUrl),
    portalPageRoutes(),
    portalAssetRoutes(context),
    adminProjectRoutes,
    adminKeyRoutes,
    adminLimitRoutes,
    adminAuditRoutes,
    adminCapabilityRoutes,
    adminCapabilitySecretRoutes,
    adminCapabilityRemovalRoutes,
    capabilityPlaneRoutes(context.keys),
    capabilityEventRoutes,
    breakerRoutes,
    capabilityProjectRoutes(context.registry),
    capabilityUsageRoutes(context.registry),
    meteringRoutes,
    reservationRoutes,
    erasureTaskRoutes,
  ])
    await app.register(plugin);
  await registerGateway(app, context); // last: its routes take what no other route does
  return app;
}

/** Where users reach this service: PLATFORM_PUBLIC_URL, else the address it listens on. */
function publicUrl(app: App, configured: string | undefined): string {
  if (configured) return configured;
  const [first] = app.addresses();
  if (!first || typeof first === 'string') throw new Error('the API does not listen on a TCP address');
  const host = first.family === 'IPv6' ? `[${first.address}]` : first.address;
  return `http://${host}:${first.port}`;
}

const compilers = AjvCompiler();
type AjvOptions = { customOptions?: Record<string, unknown> };

/** Fastify's validator compiler, with types coerced in query strings only. */
function queryCoercingValidator(schemas: Parameters<typeof compilers>[0], options: AjvOptions = {}) {
  const exact = compilers(schemas, options as never);
  const customOptions = { ...options.customOptions, coerceTypes: true };
  const coercing = compilers(schemas, { ...options, customOptions } as never);
  return (route: RouteDefinition) => (route.httpPart === 'querystring' ? coercing : exact)(route);
}

const serializers = SerializerSelector();

/**
 * Fastify's serializer compiler, building each distinct response schema once. Fastify builds one for
 * every status of every route, and most are the same few: each route's four to eight problem responses
 * are all PlatformError. Building them took most of an app's start (about half of a test service's).
 * A serializer is a function of its schema alone, so sharing one between routes changes no answer.
 */
function oneSerializerPerSchema(...options: Parameters<typeof serializers>) {
  const build = serializers(...options);
  const built = new Map<string, ReturnType<typeof build>>();
  return (route: ResponseDefinition) => {
    const schema = JSON.stringify(route.schema);
    let serializer = built.get(schema);
    if (!serializer) {
      serializer = build(route);
      built.set(schema, serializer);
    }
    return serializer;
  };
}

function sendProblem(reply: FastifyReply, failure: PlatformError, requestId: string): FastifyReply {
  for (const [name, value] of Object.entries(failure.options.headers ?? {})) reply.header(name, value);
  return reply.code(failure.status).type('application/problem+json').send(problemBody(failure, requestId));
}
