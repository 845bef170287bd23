import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AuditEntrySchema, AuditPageSchema, AuditQuerySchema } from '../../../audit/schema.ts';
import { auditLog } from '../../../audit/store.ts';
import type { Context } from '../../../context.ts';
import { pageOf } from '../../../pagination.ts';
import { errorResponses } from '../../problems.ts';
import { ref } from '../common.ts';

export const adminAuditRoutes =
  (context: Context): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(AuditEntrySchema);
    app.addSchema(AuditPageSchema);
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
        return auditLog(context.db).list({ projectId, action, since }, pageOf(request.query));
      },
    );
  };
