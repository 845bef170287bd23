// A capability's instances report their circuit breakers, one per declared provider; health reads them
// (docs/capabilities.md).

import { CAPABILITY_SCOPE } from '../../../keys/scopes.ts';
import { BreakerReportBodySchema } from '../../../plane/capabilities/schema.ts';
import { errorResponses } from '../../problems.ts';
import { IdempotencyHeaders, routes } from '../common.ts';
import { capabilityOf } from './plane.ts';

const tags = ['capability'];
const config = { access: CAPABILITY_SCOPE } as const;

export const breakerRoutes = routes([], (app) => {
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
});
