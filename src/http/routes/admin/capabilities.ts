// The management API's capabilities (operator keys with capabilities:manage; docs/capabilities.md):
// registered, listed, read, pointed somewhere else. Keys and signing secrets: capability-secrets.ts.
import {
  CapabilityCreatedSchema,
  CapabilityListSchema,
  CapabilityParamsSchema,
  CapabilityPatchSchema,
  CapabilitySchema,
  CapabilityWithReportsSchema,
  CreateCapabilityBodySchema,
  ManifestSchema,
} from '../../../plane/capabilities/schema.ts';
import { errorResponses } from '../../problems.ts';
import { IdempotencyHeaders, ref, routes } from '../common.ts';

const tags = ['admin'];
const config = { access: 'capabilities:manage' as const };
const byName = { tags, headers: IdempotencyHeaders, params: CapabilityParamsSchema };
const _writes = errorResponses(400, 403, 404, 409, 422);
const SCHEMAS = [
  ManifestSchema,
  CapabilitySchema,
  CapabilityCreatedSchema,
  CapabilityListSchema,
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
});
