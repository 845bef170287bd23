// The OpenAPI document as a product that generators and linters read: where the service is, the three kinds
// of key and the scope each operation needs (from the route's own `access`, so they cannot disagree), and
// the `webhooks` a receiver gets (OpenAPI 3.1). `openapi.json` at the root is its committed snapshot.
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { RouteOptions } from 'fastify';
import { CORE_EVENT_TYPES } from '../delivery-store/operational.ts';
import { CAPABILITY_SCOPE, isOperatorScope } from '../keys/scopes.ts';
import type { EventTypeDeclaration } from '../registry.ts';

type Access = NonNullable<RouteOptions['config']>['access'];

/** Who may call an operation, as OpenAPI says it: a project's key or an operator's, with its scope. */
export function securityOf(access: Access = 'key'): Record<string, string[]>[] {
  if (access === 'public') return [];
  if (access === 'key') return [{ apiKey: [] }, { operatorKey: [] }];
  if (access === CAPABILITY_SCOPE) return [{ capabilityKey: [] }];
  return isOperatorScope(access) ? [{ operatorKey: [access] }] : [{ apiKey: [access] }];
}

export function openapiOptions(version: string): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'platform-core',
        version,
        description:
          'The shared platform service: keys and scopes, idempotent writes, signed webhooks, usage and limits, ' +
          'subject erasure and health, and the plane other products plug into. Contract 0.1.0 with its 0.2 and 0.3 additions. Every error is an RFC 9457 ' +
          'problem: see [error codes](/docs/errors). Each operation lists the scope its key needs.',
        license: { name: 'UNLICENSED (proprietary; see package.json)' },
      },
      servers: [{ url: 'http://127.0.0.1:8080', description: '`npm start` on your machine (PORT, HOST)' }],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'x-api-key',
            description: 'A project’s key (`pk_test_…`, `pk_live_…`), holding project scopes.',
          },
          operatorKey: {
            type: 'apiKey',
            in: 'header',
            name: 'x-api-key',
            description: 'An operator’s key (`pk_op_…`), for the management API under /admin/v1.',
          },
          capabilityKey: {
            type: 'apiKey',
            in: 'header',
            name: 'x-api-key',
            description: 'A capability’s key (`pk_cap_…`), for the capability plane under /capability/v1.',
          },
        },
      },
      // fastify-swagger's types know paths only; a webhook is a path item all the same
      webhooks: webhooks(CORE_EVENT_TYPES) as never,
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) ?? `def-${i}`,
    },
    transformObject: (document) =>
      optionalBodies(('openapiObject' in document ? document.openapiObject : {}) as OpenApiDocument),
  };
}

/** Operations whose body may be left out (their route reads no body as {}). */
const OPTIONAL_BODIES = new Set(['sendTestEvent']);

type OpenApiDocument = {
  paths?: Record<string, Record<string, { operationId?: string; requestBody?: { required?: boolean } }>>;
};

/** fastify-swagger marks every body required; these are not. */
function optionalBodies(document: OpenApiDocument) {
  for (const item of Object.values(document.paths ?? {}))
    for (const operation of Object.values(item))
      if (operation.requestBody && OPTIONAL_BODIES.has(operation.operationId ?? ''))
        operation.requestBody.required = false;
  return document as never;
}

const SIGNED_HEADERS = [
  ['webhook-id', 'The event’s id: the same on every attempt, so a receiver can drop duplicates.'],
  ['webhook-timestamp', 'Seconds since the epoch when this attempt was signed.'],
  ['webhook-signature', 'Space-separated `v1,<base64 HMAC-SHA256>`: one per secret during a rotation.'],
].map(([name, description]) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
}));

/** What an endpoint receives: Core's own event types by name, and the envelope of a project's types. */
function webhooks(types: EventTypeDeclaration[]) {
  const operation = (name: string, summary: string, type: object, data: object, example: unknown) => ({
    post: {
      operationId: `${name.replace(/[.-](\w)/g, (_, c: string) => c.toUpperCase())}Webhook`,
      summary,
      // Sent by the service, signed with the endpoint's secret (the headers), not called with a key.
      security: [],
      parameters: SIGNED_HEADERS,
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['id', 'type', 'timestamp', 'data'],
              properties: {
                id: { type: 'string', format: 'uuid' },
                type,
                timestamp: { type: 'string', format: 'date-time' },
                data,
              },
              additionalProperties: false,
            },
            example,
          },
        },
      },
      responses: {
        '2XX': {
          description: 'Received. Any other answer is retried on the schedule; 410 disables the endpoint.',
        },
      },
    },
  });
  const envelope = (type: string, data: unknown) => ({
    id: '0193b0a4-1e0b-7d4e-9f10-a1b2c3d4e5f6',
    type,
    timestamp: '2026-11-24T09:30:00.000Z',
    data,
  });
  return {
    event: operation(
      'projectEvent',
      'An event a product published, of a type its project declared (GET /core/v1/event-types)',
      { type: 'string' },
      { type: 'object' },
      envelope('pay.payment.succeeded', { amount: 4200, currency: 'EUR' }),
    ),
    ...Object.fromEntries(
      types.map((declared) => [
        declared.name,
        operation(
          declared.name,
          declared.description,
          { const: declared.name },
          declared.schema ?? { type: 'object' },
          envelope(declared.name, declared.example ?? {}),
        ),
      ]),
    ),
  };
}
