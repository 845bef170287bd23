// A capability's keys and signing secrets (operator keys with capabilities:manage): another key, a
// rotation of its signing secret, and the end of one.
import {
  CapabilityKeyCreatedSchema,
  CapabilityParamsSchema,
  CapabilitySchema,
  ManifestSchema,
  SigningSecretRotatedSchema,
} from '../../../plane/capabilities/schema.ts';
import { errorResponses } from '../../problems.ts';
import { IdempotencyHeaders, ref, routes } from '../common.ts';

const tags = ['admin'];
const config = { access: 'capabilities:manage' as const };
const byName = { tags, headers: IdempotencyHeaders, params: CapabilityParamsSchema };
const writes = errorResponses(400, 403, 404, 409, 422);

export const adminCapabilitySecretRoutes = routes(
  [ManifestSchema, CapabilitySchema, CapabilityKeyCreatedSchema, SigningSecretRotatedSchema],
  (app) => {
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
  },
);
