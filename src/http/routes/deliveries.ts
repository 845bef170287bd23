// Recovering deliveries (CONTRACT.md, Delivery control): one retried now, an endpoint's history re-sent
// in bulk by a background job (with a dry run), and the job's progress.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Context } from '../../context.ts';
import { getJob } from '../../recovery/jobs.ts';
import { recovery } from '../../recovery/recovery.ts';
import { JobSchema, RecoverBodySchema, RecoverySchema, RetriedSchema } from '../../recovery/schema.ts';
import { IdParamsSchema } from '../../webhooks/schema.ts';
import { errorResponses } from '../problems.ts';
import { IdempotencyHeaders, projectIdOf, ref, transactionOf } from './common.ts';

const TAGS = ['deliveries'];

export const deliveryRoutes =
  (context: Context): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const schema of [RetriedSchema, RecoverySchema, JobSchema]) app.addSchema(schema);
    const write = { access: 'webhooks:write' as const };
    const byId = { headers: IdempotencyHeaders, params: IdParamsSchema, tags: TAGS };
    const recoveryOf = (request: FastifyRequest) =>
      recovery(transactionOf(request), context.config.retentionDays);

    app.post(
      '/core/v1/deliveries/:id/retry',
      {
        config: write,
        schema: {
          ...byId,
          operationId: 'retryDelivery',
          summary: 'Send a dead or waiting delivery now (a dead one gets one more attempt)',
          response: { 202: ref('DeliveryRetried'), ...errorResponses(400, 403, 404, 409, 422) },
        },
      },
      async (request, reply) => {
        reply.code(202);
        return recoveryOf(request).retry(projectIdOf(request), request.params.id);
      },
    );

    app.post(
      '/core/v1/webhook-endpoints/:id/recover',
      {
        config: write,
        schema: {
          ...byId,
          tags: ['webhooks'],
          operationId: 'recoverWebhookEndpoint',
          summary:
            'Re-send the events whose latest delivery to the endpoint is dead (or delivered, or cancelled)',
          description:
            'Filtered by event type and a window of the events’ time; dryRun answers the count only. At most 100,000 events per job.',
          body: RecoverBodySchema,
          response: {
            200: ref('Recovery'),
            202: ref('Recovery'),
            ...errorResponses(400, 403, 404, 409, 413, 415, 422),
          },
        },
      },
      async (request, reply) => {
        const result = await recoveryOf(request).recover(
          projectIdOf(request),
          request.params.id,
          request.body,
        );
        reply.code(result.jobId ? 202 : 200);
        return result;
      },
    );

    app.get(
      '/core/v1/jobs/:id',
      {
        config: { access: 'webhooks:read' },
        schema: {
          operationId: 'getJob',
          summary: 'A background job and its progress',
          tags: TAGS,
          params: IdParamsSchema,
          response: { 200: ref('Job'), ...errorResponses(403, 404) },
        },
      },
      async (request) => getJob(context.db, projectIdOf(request), request.params.id),
    );
  };
