// The webhook-endpoint routes of spec section 4, with CONTRACT.md's answers for the ones it leaves open.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Context } from '../../context.ts';
import {
  CreateEndpointBodySchema,
  IdParamsSchema,
  WebhookEndpointCreatedSchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
  WebhookSecretRotatedSchema,
} from '../../webhooks/schema.ts';
import { webhookEndpointService } from '../../webhooks/service.ts';
import { errorResponses } from '../problems.ts';
import { auditOf, IdempotencyHeaders, projectIdOf, ref, transactionOf } from './common.ts';

const TAGS = ['webhooks'];

export const webhookEndpointRoutes =
  (context: Context): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const schema of [
      WebhookEndpointSchema,
      WebhookEndpointCreatedSchema,
      WebhookEndpointListSchema,
      WebhookSecretRotatedSchema,
    ]) {
      app.addSchema(schema);
    }
    const deps = {
      keyring: context.keyring,
      addresses: { allowPrivate: context.config.webhookAllowPrivate, resolve: context.resolve },
    };
    const service = (request: FastifyRequest) => webhookEndpointService(transactionOf(request), deps);
    const write = { access: 'webhooks:write' as const };
    const byId = { headers: IdempotencyHeaders, params: IdParamsSchema, tags: TAGS };

    app.post(
      '/core/v1/webhook-endpoints',
      {
        config: write,
        schema: {
          summary: 'Declare an endpoint that receives the events of the project',
          tags: TAGS,
          headers: IdempotencyHeaders,
          body: CreateEndpointBodySchema,
          response: { 201: ref('WebhookEndpointCreated'), ...errorResponses(400, 403, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        reply.code(201);
        return service(request).create(projectIdOf(request), request.body, auditOf(request));
      },
    );

    app.get(
      '/core/v1/webhook-endpoints',
      {
        config: { access: 'webhooks:read' },
        schema: {
          summary: 'The endpoints of the project, oldest first; never a secret',
          tags: TAGS,
          response: { 200: ref('WebhookEndpointList'), ...errorResponses(403) },
        },
      },
      async (request) => ({
        data: await webhookEndpointService(context.db, deps).list(projectIdOf(request)),
      }),
    );

    app.delete(
      '/core/v1/webhook-endpoints/:id',
      {
        config: write,
        schema: {
          ...byId,
          summary: 'Delete an endpoint and its secrets',
          response: { 204: { type: 'null' }, ...errorResponses(400, 403, 404, 409, 422) },
        },
      },
      async (request, reply) => {
        await service(request).delete(projectIdOf(request), request.params.id, auditOf(request));
        reply.code(204);
      },
    );

    app.post(
      '/core/v1/webhook-endpoints/:id/rotate-secret',
      {
        config: write,
        schema: {
          ...byId,
          summary: 'Make a new secret the active one; the previous one keeps signing until retired',
          response: { 200: ref('WebhookSecretRotated'), ...errorResponses(400, 403, 404, 409, 422) },
        },
      },
      async (request) =>
        service(request).rotateSecret(projectIdOf(request), request.params.id, auditOf(request)),
    );

    app.post(
      '/core/v1/webhook-endpoints/:id/retire-previous-secret',
      {
        config: write,
        schema: {
          ...byId,
          summary: 'End a rotation: the previous secret stops signing',
          response: { 200: ref('WebhookEndpoint'), ...errorResponses(400, 403, 404, 409, 422) },
        },
      },
      async (request) =>
        service(request).retirePreviousSecret(projectIdOf(request), request.params.id, auditOf(request)),
    );
  };
