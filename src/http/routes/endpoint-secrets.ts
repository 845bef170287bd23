// An endpoint's signing secret rotated, and the previous one retired at the end of the rotation; under its
// webhook endpoint and under its destination alike (common.ts, MOUNTS).
import { DestinationSchema } from '../../webhooks/destination-schema.ts';
import { WebhookEndpointSchema, WebhookSecretRotatedSchema } from '../../webhooks/schema.ts';
import { errorResponses } from '../problems.ts';
import { IdempotencyHeaders, IdParamsSchema, MOUNTS, projectIdOf, ref, routes } from './common.ts';

const config = { access: 'webhooks:write' as const };
const identified = { headers: IdempotencyHeaders, params: IdParamsSchema };
const refusals = errorResponses(400, 403, 404, 409, 422);

const SCHEMAS = [WebhookEndpointSchema, DestinationSchema, WebhookSecretRotatedSchema];

export const endpointSecretRoutes = routes(SCHEMAS, (app) => {
  for (const { path, record, tag, named } of MOUNTS) {
    const byId = { ...identified, tags: [tag] };
    app.post(
      `${path}/:id/rotate-secret`,
      {
        config,
        schema: {
          ...byId,
          operationId: named('rotateWebhookSecret', 'rotateDestinationSecret'),
          summary: 'Make a new secret the active one; the previous one keeps signing until retired',
          response: { 200: ref('WebhookSecretRotated'), ...refusals },
        },
      },
      async (request) =>
        request.services.webhookEndpoints.rotateSecret(projectIdOf(request), request.params.id),
    );

    app.post(
      `${path}/:id/retire-previous-secret`,
      {
        config,
        schema: {
          ...byId,
          operationId: named('retirePreviousWebhookSecret', 'retirePreviousDestinationSecret'),
          summary: 'End a rotation: the previous secret stops signing',
          response: { 200: ref(record), ...refusals },
        },
      },
      async (request) =>
        request.services.webhookEndpoints.retirePreviousSecret(projectIdOf(request), request.params.id),
    );
  }
});
