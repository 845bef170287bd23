// A polling destination's feed (contract 0.4), read from a cursor its consumer keeps.
import { DestinationMessagesSchema, MessagesQuerySchema } from '../../webhooks/destination-schema.ts';
import { errorResponses } from '../problems.ts';
import { IdParamsSchema, projectIdOf, ref, routes } from './common.ts';

const tags = ['destinations'];
const read = { access: 'webhooks:read' as const };

export const destinationMessageRoutes = routes([DestinationMessagesSchema], (app) => {
  app.get(
    '/core/v1/destinations/:id/messages',
    {
      config: read,
      schema: {
        operationId: 'listDestinationMessages',
        summary: 'A polling destination’s messages after a cursor, in delivery order',
        description:
          'Reading changes nothing: the consumer keeps its cursor. An empty page answers the cursor it was given, to poll with again.',
        tags,
        params: IdParamsSchema,
        querystring: MessagesQuerySchema,
        response: { 200: ref('DestinationMessages'), ...errorResponses(400, 403, 404) },
      },
    },
    async (request, reply) => {
      const { cursor, limit = 100 } = request.query;
      const page = await request.services.destinations.messages(
        projectIdOf(request),
        request.params.id,
        cursor,
        limit,
      );
      // The answer is JSON text already (its payloads as stored): sent as it is.
      return reply.type('application/json').send(page);
    },
  );
});
