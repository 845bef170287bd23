import type { FastifyInstance } from 'fastify';
import type { Context } from '../../context.ts';
import { EraseBodySchema, SubjectErasedSchema } from '../../erasure/schema.ts';
import { erasureService } from '../../erasure/service.ts';
import { normalizeSubject } from '../../erasure/subject.ts';
import { principalOf } from '../auth.ts';
import { errorResponses } from '../problems.ts';
import { idempotencyHeader, transactionOf } from './common.ts';

export const subjectRoutes = (context: Context) => async (app: FastifyInstance) => {
  app.addSchema(SubjectErasedSchema);
  app.post(
    '/core/v1/subjects/erase',
    {
      config: { access: 'subjects:erase' },
      schema: {
        summary: 'Erase or anonymize a person in every capability of the project',
        tags: ['subjects'],
        headers: idempotencyHeader,
        body: EraseBodySchema,
        response: { 200: { $ref: 'SubjectErased#' }, ...errorResponses(400, 403, 409, 413, 415, 422) },
      },
    },
    async (request) => {
      const { subject } = request.body as { subject: { type: string; value: string } };
      const projectId = principalOf(request).project.id;
      request.onCommit?.(() => context.meter.count(projectId, 'core', 'subjects_erased'));
      return erasureService(transactionOf(request), context).erase(
        principalOf(request),
        normalizeSubject(subject),
        context.clock.now(),
      );
    },
  );
};
