import { Type } from 'typebox';
import { pageFields } from '../lib/pagination.ts';
import { AUDIT_ACTIONS } from './store.ts';

export const AuditEntrySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    at: Type.String({ format: 'date-time' }),
    actor: Type.Object({
      type: Type.Union([Type.Literal('key'), Type.Literal('cli')]),
      keyId: Type.Optional(Type.String({ format: 'uuid' })),
    }),
    action: Type.String({ enum: [...AUDIT_ACTIONS] }),
    projectId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    target: Type.Object({ type: Type.String(), id: Type.String() }),
    requestId: Type.String(),
    fields: Type.Array(Type.String(), { description: 'the names of what changed, never a value' }),
  },
  { $id: 'AuditEntry' },
);

export const AuditPageSchema = Type.Object(
  {
    data: Type.Array(Type.Unsafe<unknown>({ $ref: 'AuditEntry#' })),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'AuditPage' },
);

export const AuditQuerySchema = Type.Object(
  {
    projectId: Type.Optional(Type.String({ format: 'uuid' })),
    action: Type.Optional(Type.String({ enum: [...AUDIT_ACTIONS] })),
    since: Type.Optional(Type.String({ format: 'date-time' })),
    ...pageFields,
  },
  { additionalProperties: false },
);
