// An endpoint's attempts by hour over the last day: the portal's chart, and anyone's.
import { EndpointStatsSchema } from '../../webhooks/schema.ts';
import { errorResponses } from '../problems.ts';
import { IdParamsSchema, MOUNTS, projectIdOf, ref, routes } from './common.ts';

const read = { access: 'webhooks:read' as const };

export const endpointStatsRoutes = routes([EndpointStatsSchema], (app) => {
  for (const { path, tag, named } of MOUNTS)
    app.get(
      `${path}/:id/stats`,
      {
        config: read,
        schema: {
          operationId: named('getWebhookEndpointStats', 'getDestinationStats'),
          summary: 'The endpoint’s attempts in each of the last 24 hours, succeeded and failed',
          description:
            'Attempts of the deliveries of events published within the window (a retry of an older event is not counted), as the list’s last24h.',
          tags: [tag],
          params: IdParamsSchema,
          response: { 200: ref('EndpointStats'), ...errorResponses(403, 404) },
        },
      },
      async (request) => request.services.webhookEndpoints.hourly(projectIdOf(request), request.params.id),
    );
});
