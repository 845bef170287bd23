// Erasing a person across every capability of the project, and reading how an erasure went.
import {
  EraseBodySchema,
  ErasureSchema,
  SubjectErasedSchema,
  SubjectErasurePendingSchema,
} from '../../erasure/schema.ts';
import { principalOf } from '../auth.ts';
import { errorResponses } from '../problems.ts';
import { IdempotencyHeaders, IdParamsSchema, projectIdOf, ref, routes } from './common.ts';

const tags = ['subjects'];

export const subjectRoutes = routes(
  [SubjectErasedSchema, SubjectErasurePendingSchema, ErasureSchema],
  (app) => {
    app.post(
      '/core/v1/subjects/erase',
      {
        config: { access: 'subjects:erase' },
        schema: {
          operationId: 'eraseSubject',
          summary: 'Erase or anonymize a person in every capability of the project',
          description:
            'Core’s erasure commits first; then every capability that holds people’s data is asked, and the answer ' +
            'waits up to 10 s: 200 when all answered, 202 with those still pending otherwise (they are asked ' +
            'again, with back-off, for up to 7 days: GET /core/v1/erasures/{id}).',
          tags,
          headers: IdempotencyHeaders,
          body: EraseBodySchema,
          response: {
            200: ref('SubjectErased'),
            202: ref('SubjectErasurePending'),
            ...errorResponses(400, 403, 409, 413, 415, 422),
          },
        },
      },
      async (request, reply) => {
        const { subject } = request.body;
        const answer = await request.services.erasure.erase(
          projectIdOf(request),
          subject,
          principalOf(request).keyId,
        );
        reply.code(answer.status);
        return answer.body;
      },
    );

    app.get(
      '/core/v1/erasures/:id',
      {
        config: { access: 'subjects:erase' },
        schema: {
          operationId: 'getErasure',
          summary: 'An erasure: its state, and each capability’s',
          tags,
          params: IdParamsSchema,
          response: { 200: ref('Erasure'), ...errorResponses(400, 403, 404) },
        },
      },
      async (request) => request.services.erasure.get(projectIdOf(request), request.params.id),
    );
  },
);
