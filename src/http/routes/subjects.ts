import { EraseBodySchema, SubjectErasedSchema } from '../../erasure/schema.ts';
import { principalOf } from '../auth.ts';
import { errorResponses } from '../problems.ts';
import { IdempotencyHeaders, projectIdOf, ref, routes } from './common.ts';

export const subjectRoutes = routes([SubjectErasedSchema], (app) => {
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
    async (request) =>
      request.services.erasure.erase(projectIdOf(request), request.body.subject, principalOf(request).keyId),
  );
});
