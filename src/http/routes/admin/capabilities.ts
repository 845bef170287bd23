// The management API's capabilities (operator keys with capabilities:manage; docs/capabilities.md):
// registered, listed, read, pointed somewhere else, given keys, their signing secrets rotated.
import {
  CapabilityCreatedSchema,
  CapabilityKeyCreatedSchema,
  CapabilityListSchema,
  CapabilityParamsSchema,
  CapabilityPatchSchema,
  CapabilitySchema,
  CapabilityWithReportsSchema,
  CreateCapabilityBodySchema,
  ManifestSchema,
  SigningSecretRotatedSchema,
} from '../../../capabilities/schema.ts';
import { errorResponses } from '../../problems.ts';
import { IdempotencyHeaders, ref, routes } from '../common.ts';

const tags = ['admin'];
const config = { access: 'capabilities:manage' as const };
const byName = { tags, headers: IdempotencyHeaders, params: CapabilityParamsSchema };
const writes = errorResponses(400, 403, 404, 409, 422);
const SCHEMAS = [
  ManifestSchema,
  CapabilitySchema,
  CapabilityCreatedSchema,
  CapabilityListSchema,
  CapabilityKeyCreatedSchema,
  SigningSecretRotatedSchema,
  CapabilityWithReportsSchema,
];

export const adminCapabilityRoutes = routes(SCHEMAS, (app) => {
  app.post(
    '/admin/v1/capabilities',
    {
      config,
      schema: {
        operationId: 'createCapability',
        summary: 'Register a capability: its first key and its signing secret are shown this once',
        tags,
        headers: IdempotencyHeaders,
        body: CreateCapabilityBodySchema,
        response: { 201: ref('CapabilityCreated'), ...errorResponses(400, 403, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return request.services.capabilities.register(request.body);
    },
  );

  app.get(
    '/admin/v1/capabilities',
    {
      config,
      schema: {
        operationId: 'listCapabilities',
        summary: 'The capabilities, by name, with their manifests',
        tags,
        response: { 200: ref('CapabilityList'), ...errorResponses(403) },
      },
    },
    async (request) => ({ data: await request.services.capabilities.list() }),
  );

  app.get(
    '/admin/v1/capabilities/:name',
    {
      config,
      schema: {
        operationId: 'getCapability',
        summary: 'A capability, its manifest, and what its live instances report of their breakers',
        tags,
        params: CapabilityParamsSchema,
        response: { 200: ref('CapabilityWithReports'), ...errorResponses(403, 404) },
      },
    },
    async (request) => request.services.capabilities.withReports(request.params.name),
  );

  app.patch(
    '/admin/v1/capabilities/:name',
    {
      config,
      schema: {
        ...byName,
        operationId: 'updateCapability',
        summary: 'Change a capability’s description, upstream or erasure URL (JSON merge patch)',
        description:
          'Where a capability’s traffic goes is an operator’s decision alone: its own key cannot change it.',
        body: CapabilityPatchSchema,
        response: { 200: ref('Capability'), ...errorResponses(400, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request) => request.services.capabilities.update(request.params.name, request.body),
  );

  app.post(
    '/admin/v1/capabilities/:name/keys',
    {
      config,
      schema: {
        ...byName,
        operationId: 'createCapabilityKey',
        summary: 'Another key of the capability (an old one is revoked with /admin/v1/keys/{id}/revoke)',
        response: { 201: ref('CapabilityKeyCreated'), ...writes },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return request.services.capabilities.createKey(request.params.name);
    },
  );

  app.post(
    '/admin/v1/capabilities/:name/rotate-signing-secret',
    {
      config,
      schema: {
        ...byName,
        operationId: 'rotateCapabilitySigningSecret',
        summary: 'A new signing secret; the previous one keeps signing until retired',
        response: { 200: ref('SigningSecretRotated'), ...writes },
      },
    },
    async (request) => request.services.capabilities.rotateSigningSecret(request.params.name),
  );

  app.post(
    '/admin/v1/capabilities/:name/retire-previous-signing-secret',
    {
      config,
      schema: {
        ...byName,
        operationId: 'retirePreviousCapabilitySigningSecret',
        summary: 'End a rotation: the previous signing secret stops signing',
        response: { 200: ref('Capability'), ...writes },
      },
    },
    async (request) => request.services.capabilities.retirePreviousSigningSecret(request.params.name),
  );
});
