// An event sent again: replayed to the endpoints subscribed now, and the test event of one endpoint.
import {
  TestEventBodySchema,
  WebhookReplayResultSchema,
  WebhookTestSentSchema,
} from '../../events/schema.ts';
import { errorResponses } from '../problems.ts';
import { IdempotencyHeaders, IdParamsSchema, MOUNTS, projectIdOf, ref, routes } from './common.ts';

const tags = ['events'];

export const eventSendRoutes = routes([WebhookReplayResultSchema, WebhookTestSentSchema], (app) => {
  app.post(
    '/core/v1/events/:id/replay',
    {
      config: { access: 'webhooks:write' },
      schema: {
        operationId: 'replayEvent',
        summary:
          'Resend an event to the active endpoints subscribed to its type: same eventId, new deliveries',
        tags,
        headers: IdempotencyHeaders,
        params: IdParamsSchema,
        response: { 200: ref('WebhookReplayResult'), ...errorResponses(400, 403, 404, 409, 422) },
      },
    },
    async (request) => request.services.events.replay(projectIdOf(request), request.params.id),
  );

  for (const { path, tag, named } of MOUNTS)
    app.post(
      `${path}/:id/test`,
      {
        config: { access: 'webhooks:write' },
        // No body is the plain test (and what every earlier client sends): validated as {}.
        preValidation: async (request) => {
          request.body ??= {};
        },
        schema: {
          operationId: named('sendTestEvent', 'sendDestinationTestEvent'),
          summary:
            'Send a signed test event to this endpoint only: core.webhook.test, or an example of a type',
          description:
            'Without a body, core.webhook.test. With {"eventType"}, an event of that type of the catalogue with its example as data.',
          tags: [tag],
          headers: IdempotencyHeaders,
          params: IdParamsSchema,
          body: TestEventBodySchema,
          response: { 200: ref('WebhookTestSent'), ...errorResponses(400, 403, 404, 409, 413, 415, 422) },
        },
      },
      async (request) =>
        request.services.events.sendTest(projectIdOf(request), request.params.id, request.body.eventType),
    );
});
