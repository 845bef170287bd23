import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Context } from '../../context.ts';
import { EraseBodySchema, SubjectErasedSchema } from '../../erasure/schema.ts';
import { erasureService } from '../../erasure/service.ts';
import { principalOf } from '../auth.ts';
import { errorResponses } from '../problems.ts';
import { auditOf, IdempotencyHeaders, projectIdOf, ref, writeScope } from './common.ts';

export const subjectRoutes =
  (context: Context): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(SubjectErasedSchema);
    app.post(
      '/core/v1/subjects/erase',
      {
        config: { access: 'subjects:erase' },
        schema: {
          operationId: 'eraseSubject',
          summary: 'Erase or anonymize a person in every capability of the project',
          tags: ['subjects'],
          headers: IdempotencyHeaders,
          body: EraseBodySchema,
          response: { 200: ref('SubjectErased'), ...errorResponses(400, 403, 409, 413, 415, 422) },
        },
      },
      async (request) => {
        const { tx, ...hooks } = writeScope(request);
        return erasureService(tx, { ...context, ...hooks }).erase(
          projectIdOf(request),
          request.body.subject,
          principalOf(request).keyId,
          auditOf(request),
        );
      },
    );
  };
