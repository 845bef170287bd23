// The management API's removal of a capability (contract 0.4, "A capability's life"): it leaves every
// process before its 204 (docs/capabilities.md).
import { CapabilityParamsSchema } from '../../../plane/capabilities/schema.ts';
import { errorResponses } from '../../problems.ts';
import { IdempotencyHeaders, routes } from '../common.ts';

export const adminCapabilityRemovalRoutes = routes([], (app) => {
  app.delete(
    '/admin/v1/capabilities/:name',
    {
      config: { access: 'capabilities:manage' as const },
      schema: {
        tags: ['admin'],
        headers: IdempotencyHeaders,
        params: CapabilityParamsSchema,
        operationId: 'removeCapability',
        summary: 'Remove a capability: its keys, routes, providers, scopes and pending erasure tasks go',
        description:
          'Its keys are removed and its gateway routes answer 404; its providers leave health; its pending ' +
          'erasure tasks are skipped; its event types and scopes are no longer known. Its usage history, ' +
          'events and deliveries are kept. Every process applies it before this answer. The name can be ' +
          'registered again, as a new capability.',
        response: { 204: { type: 'null' }, ...errorResponses(400, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      reply.code(204);
      await request.services.capabilities.remove(request.params.name);
    },
  );
});
