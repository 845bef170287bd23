// The capability plane (docs/capabilities.md), for capabilities' own keys: their manifest, verifying the
// project keys their callers present, and publishing events on a project's behalf. Metering is in
// metering.ts.
import type { FastifyRequest } from 'fastify';
import {
  BreakerReportBodySchema,
  CapabilitySchema,
  ManifestSchema,
  VerifiedSchema,
  VerifyBodySchema,
} from '../../../capabilities/schema.ts';
import { verifyKey } from '../../../capabilities/verify.ts';
import { CapabilityEventBodySchema, EventPublishedSchema } from '../../../events/schema.ts';
import { MAX_EVENT_DATA_BYTES } from '../../../events/service.ts';
import { memberText } from '../../../json-text.ts';
import type { KeyCache } from '../../../keys/cache.ts';
import { CAPABILITY_SCOPE } from '../../../keys/scopes.ts';
import { principalOf } from '../../auth.ts';
import { errorResponses } from '../../problems.ts';
import { IdempotencyHeaders, ref, routes } from '../common.ts';

const tags = ['capability'];
const config = { access: CAPABILITY_SCOPE } as const;

/** The capability whose key made the request. */
export const capabilityOf = (request: FastifyRequest) => principalOf(request).capability as string;

export const capabilityPlaneRoutes = (keys: KeyCache) =>
  routes([ManifestSchema, CapabilitySchema, VerifiedSchema, EventPublishedSchema], (app) => {
    app.get(
      '/capability/v1/manifest',
      {
        config,
        schema: {
          operationId: 'getOwnCapability',
          summary: 'The capability the key belongs to, with its manifest as last declared',
          tags,
          response: { 200: ref('Capability'), ...errorResponses(403) },
        },
      },
      async (request) => request.services.capabilities.get(capabilityOf(request)),
    );

    app.put(
      '/capability/v1/manifest',
      {
        config,
        bodyLimit: 512 * 1024,
        schema: {
          operationId: 'putManifest',
          summary:
            'Declare the capability’s manifest: scopes, metrics, event types, providers, erasure, gateway',
          description:
            'Replaces the whole manifest. Scopes are named <capability>:…, event types <capability>.…; a route’s ' +
            'scope and metric are declared by the same manifest; push erasure and a gateway need the addresses ' +
            'an operator set. Every process applies it within 5 s.',
          tags,
          headers: IdempotencyHeaders,
          body: ManifestSchema,
          response: { 200: ref('Capability'), ...errorResponses(400, 403, 409, 413, 415, 422) },
        },
      },
      async (request) => request.services.capabilities.putManifest(capabilityOf(request), request.body),
    );

    app.post(
      '/capability/v1/keys/verify',
      {
        config: { ...config, idempotencyKey: false },
        schema: {
          operationId: 'verifyKey',
          summary: 'Verify a project’s key a caller presented, and the scopes it holds',
          description:
            'Answers 200 whatever the key: valid with its project, or not with why. A revocation is seen within 5 s.',
          tags,
          body: VerifyBodySchema,
          response: { 200: ref('KeyVerified'), ...errorResponses(400, 403, 413, 415) },
        },
      },
      async (request) => verifyKey(keys, request.body.key, request.body.scopes),
    );

    app.put(
      '/capability/v1/breakers',
      {
        config,
        schema: {
          operationId: 'reportBreakers',
          summary: 'Report the state of an instance’s circuit breakers, one per declared provider',
          description:
            'A report lives 30 s. Health lists each declared provider with the state most live instances report ' +
            '(a tie takes the worse), or unknown when none does; open or unknown makes health degraded.',
          tags,
          headers: IdempotencyHeaders,
          body: BreakerReportBodySchema,
          response: { 204: { type: 'null' }, ...errorResponses(400, 403, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        reply.code(204);
        const { instance, providers } = request.body;
        await request.services.capabilities.reportBreakers(capabilityOf(request), instance, providers);
      },
    );

    app.post(
      '/capability/v1/events',
      {
        config,
        bodyLimit: MAX_EVENT_DATA_BYTES + 64 * 1024,
        schema: {
          operationId: 'publishCapabilityEvent',
          summary: 'Publish one of the capability’s declared event types on a project’s behalf',
          description:
            'As a project’s publish: its data checked against the type’s schema, core/events_published and its limit.',
          tags,
          headers: IdempotencyHeaders,
          body: CapabilityEventBodySchema,
          response: { 202: ref('EventPublished'), ...errorResponses(400, 403, 404, 409, 413, 415, 422, 429) },
        },
      },
      async (request, reply) => {
        reply.code(202);
        const data = memberText(request.bodyText, 'data') as string;
        const { projectId, ...publication } = request.body;
        return request.services.events.publishFor(capabilityOf(request), projectId, { ...publication, data });
      },
    );
  });
