// The capability plane (docs/capabilities.md), for capabilities' own keys: their manifest, and verifying the
// project keys their callers present. Publishing on a project's behalf is in events.ts, breakers'
// reports in breakers.ts, metering in metering.ts.
import type { FastifyRequest } from 'fastify';
import type { KeyCache } from '../../../keys/cache.ts';
import { CAPABILITY_SCOPE } from '../../../keys/scopes.ts';
import {
  CapabilitySchema,
  ManifestSchema,
  VerifiedSchema,
  VerifyBodySchema,
} from '../../../plane/capabilities/schema.ts';
import { verifyKey } from '../../../plane/capabilities/verify.ts';
import { principalOf } from '../../auth.ts';
import { errorResponses } from '../../problems.ts';
import { IdempotencyHeaders, ref, routes } from '../common.ts';

const tags = ['capability'];
const config = { access: CAPABILITY_SCOPE } as const;

/** The capability whose key made the request. */
export const capabilityOf = (request: FastifyRequest) => principalOf(request).capability as string;

export const capabilityPlaneRoutes = (keys: KeyCache) =>
  routes([ManifestSchema, CapabilitySchema, VerifiedSchema], (app) => {
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
  });
