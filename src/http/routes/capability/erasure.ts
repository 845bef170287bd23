// Erasure for capabilities that pull (docs/capabilities.md): their pending tasks, with each subject, and
// their answers. Capabilities that are pushed answer Core's signed request instead.
import {
  ErasureTaskCompleteBodySchema,
  ErasureTaskListSchema,
  ErasureTaskStateSchema,
} from '../../../erasure/schema.ts';
import { CAPABILITY_SCOPE } from '../../../keys/scopes.ts';
import { errorResponses } from '../../problems.ts';
import { IdempotencyHeaders, IdParamsSchema, ref, routes } from '../common.ts';
import { capabilityOf } from './plane.ts';

const tags = ['capability'];
const config = { access: CAPABILITY_SCOPE } as const;

export const erasureTaskRoutes = routes([ErasureTaskListSchema, ErasureTaskStateSchema], (app) => {
  app.get(
    '/capability/v1/erasure-tasks',
    {
      config,
      schema: {
        operationId: 'listErasureTasks',
        summary: 'The capability’s pending erasure tasks, with their subjects, oldest first (at most 100)',
        tags,
        response: { 200: ref('ErasureTaskList'), ...errorResponses(403) },
      },
    },
    async (request) => ({ data: await request.services.erasure.pendingFor(capabilityOf(request)) }),
  );

  app.post(
    '/capability/v1/erasure-tasks/:id/complete',
    {
      config,
      schema: {
        operationId: 'completeErasureTask',
        summary: 'Answer an erasure task: how many records were erased or anonymized',
        description: 'A task already settled answers its state and changes nothing.',
        tags,
        headers: IdempotencyHeaders,
        params: IdParamsSchema,
        body: ErasureTaskCompleteBodySchema,
        response: { 200: ref('ErasureTaskState'), ...errorResponses(400, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request) =>
      request.services.erasure.complete(capabilityOf(request), request.params.id, request.body.erased),
  );
});
