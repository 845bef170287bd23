import { AuditEntrySchema, AuditPageSchema, AuditQuerySchema } from '../../../audit/schema.ts';
import { pageOf } from '../../../lib/pagination.ts';
import { errorResponses } from '../../problems.ts';
import { ref, routes } from '../common.ts';

export const adminAuditRoutes = routes([AuditEntrySchema, AuditPageSchema], (app) => {
  app.get(
    '/admin/v1/audit',
    {
      config: { access: 'audit:read' },
      schema: {
        operationId: 'listAuditEntries',
        summary: 'The audit log, newest first: every management write, key, endpoint change and erasure',
        tags: ['admin'],
        querystring: AuditQuerySchema,
        response: { 200: ref('AuditPage'), ...errorResponses(400, 403) },
      },
    },
    async (request) => {
      const { projectId, action, since } = request.query;
      return request.services.audit.list({ projectId, action, since }, pageOf(request.query));
    },
  );
});
