// The webhook-endpoint routes of spec section 4, with CONTRACT.md's answers for the ones it leaves open.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Context } from '../../context.ts';
import {
  CancelledSchema,
  CreateEndpointBodySchema,
  EndpointPatchSchema,
  IdParamsSchema,
  WebhookEndpointCreatedSchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
  WebhookSecretRotatedSchema,
} from '../../webhooks/schema.ts';
import { webhookEndpointService } from '../../webhooks/service.ts';
import { errorResponses } from '../problems.ts';
import { auditOf, IdempotencyHeaders, projectIdOf, ref, transactionOf, writeScope } from './common.ts';

const TAGS = ['webhooks'];

export const webhookEndpointRoutes =
  (context: Context): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const schema of [
      WebhookEndpointSchema,
      WebhookEndpointCreatedSchema,
      WebhookEndpointListSchema,
      WebhookSecretRotatedSchema,
      CancelledSchema,
    ]) {
      app.addSchema(schema);
    }
    const deps = {
      keyring: context.keyring,
      addresses: { allowPrivate: context.config.webhookAllowPrivate, resolve: context.resolve },
      registry: context.registry,
      declaredTypes: context.declaredTypes,
    };
    const service = (request: FastifyRequest) => webhookEndpointService(transactionOf(request), deps);
    const write = { access: 'webhooks:write' as const };
    const byId = { headers: IdempotencyHeaders, params: IdParamsSchema, tags: TAGS };

    app.post(
      '/core/v1/webhook-endpoints',
      {
        config: write,
        schema: {
          operationId: 'createWebhookEndpoint',
          summary: 'Declare an endpoint that receives the events of the project',
          tags: TAGS,
          headers: IdempotencyHeaders,
          body: CreateEndpointBodySchema,
          response: { 201: ref('WebhookEndpointCreated'), ...errorResponses(400, 403, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        reply.code(201);
        const { sole } = writeScope(request);
        return service(request).create(projectIdOf(request), request.body, auditOf(request), sole);
      },
    );

    app.get(
      '/core/v1/webhook-endpoints',
      {
        config: { access: 'webhooks:read' },
        schema: {
          operationId: 'listWebhookEndpoints',
          summary: 'The endpoints of the project, oldest first; never a secret',
          tags: TAGS,
          response: { 200: ref('WebhookEndpointList'), ...errorResponses(403) },
        },
      },
      async (request) => ({
        data: await webhookEndpointService(context.db, deps).list(projectIdOf(request)),
      }),
    );

    app.get(
      '/core/v1/webhook-endpoints/:id',
      {
        config: { access: 'webhooks:read' },
        schema: {
          operationId: 'getWebhookEndpoint',
          summary: 'An endpoint: its state (active, paused), rate, ordering and waiting deliveries',
          tags: TAGS,
          params: IdParamsSchema,
          response: { 200: ref('WebhookEndpoint'), ...errorResponses(403, 404) },
        },
      },
      async (request) =>
        webhookEndpointService(context.db, deps).get(projectIdOf(request), request.params.id),
    );

    app.patch(
      '/core/v1/webhook-endpoints/:id',
      {
        config: write,
        schema: {
          ...byId,
          operationId: 'updateWebhookEndpoint',
          summary: 'Change an endpoint with a JSON merge patch (application/merge-patch+json)',
          description:
            'url (the address policy applies), eventTypes, rateLimitPerSecond, ordering, active. ' +
            'active: true re-enables a disabled endpoint with its secrets; false disables it and cancels what is pending.',
          body: EndpointPatchSchema,
          response: { 200: ref('WebhookEndpoint'), ...errorResponses(400, 403, 404, 409, 413, 415, 422) },
        },
      },
      async (request) =>
        service(request).update(projectIdOf(request), request.params.id, request.body, auditOf(request)),
    );

    for (const [action, paused] of [
      ['pause', true],
      ['resume', false],
    ] as const) {
      app.post(
        `/core/v1/webhook-endpoints/:id/${action}`,
        {
          config: write,
          schema: {
            ...byId,
            operationId: `${action}WebhookEndpoint`,
            summary: paused
              ? 'Pause an endpoint: its deliveries are created and held, nothing is sent'
              : 'Resume a paused endpoint: what it held goes out, oldest first',
            response: { 200: ref('WebhookEndpoint'), ...errorResponses(400, 403, 404, 409, 422) },
          },
        },
        async (request) =>
          service(request).setPaused(projectIdOf(request), request.params.id, paused, auditOf(request)),
      );
    }

    app.post(
      '/core/v1/webhook-endpoints/:id/cancel-pending',
      {
        config: write,
        schema: {
          ...byId,
          operationId: 'cancelPendingDeliveries',
          summary: 'Cancel the endpoint’s pending deliveries (their history stays)',
          response: { 200: ref('DeliveriesCancelled'), ...errorResponses(400, 403, 404, 409, 422) },
        },
      },
      async (request) => service(request).cancelPending(projectIdOf(request), request.params.id),
    );

    app.delete(
      '/core/v1/webhook-endpoints/:id',
      {
        config: write,
        schema: {
          ...byId,
          operationId: 'deleteWebhookEndpoint',
          summary: 'Delete an endpoint and its secrets',
          response: { 204: { type: 'null' }, ...errorResponses(400, 403, 404, 409, 422) },
        },
      },
      async (request, reply) => {
        reply.code(204); // before the write: a sole write records the answer with its effect
        const { sole } = writeScope(request);
        await service(request).delete(projectIdOf(request), request.params.id, auditOf(request), sole);
      },
    );

    app.post(
      '/core/v1/webhook-endpoints/:id/rotate-secret',
      {
        config: write,
        schema: {
          ...byId,
          operationId: 'rotateWebhookSecret',
          summary: 'Make a new secret the active one; the previous one keeps signing until retired',
          response: { 200: ref('WebhookSecretRotated'), ...errorResponses(400, 403, 404, 409, 422) },
        },
      },
      async (request) => {
        const { sole } = writeScope(request);
        return service(request).rotateSecret(projectIdOf(request), request.params.id, auditOf(request), sole);
      },
    );

    app.post(
      '/core/v1/webhook-endpoints/:id/retire-previous-secret',
      {
        config: write,
        schema: {
          ...byId,
          operationId: 'retirePreviousWebhookSecret',
          summary: 'End a rotation: the previous secret stops signing',
          response: { 200: ref('WebhookEndpoint'), ...errorResponses(400, 403, 404, 409, 422) },
        },
      },
      async (request) =>
        service(request).retirePreviousSecret(projectIdOf(request), request.params.id, auditOf(request)),
    );
  };
