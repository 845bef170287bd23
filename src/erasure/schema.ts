import { Type } from 'typebox';
import { SUBJECT_TYPES } from '../registry.ts';

export const EraseBodySchema = Type.Object(
  {
    subject: Type.Object(
      {
        type: Type.String({
          enum: [...SUBJECT_TYPES],
          description: 'email (case-insensitive), phone (E.164) or external_id',
        }),
        value: Type.String({ minLength: 1, maxLength: 320 }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, examples: [{ subject: { type: 'email', value: 'ada@example.com' } }] },
);

export const SubjectErasedSchema = Type.Object(
  {
    erasureId: Type.String({ format: 'uuid' }),
    capabilities: Type.Array(
      Type.Object({ capability: Type.String(), erased: Type.Integer({ minimum: 0 }) }),
    ),
  },
  { $id: 'SubjectErased' },
);

export const SubjectErasurePendingSchema = Type.Object(
  {
    erasureId: Type.String({ format: 'uuid' }),
    capabilities: Type.Array(
      Type.Object({ capability: Type.String(), erased: Type.Integer({ minimum: 0 }) }),
      { description: 'those that answered within 10 s, Core first' },
    ),
    pending: Type.Array(Type.String(), {
      description:
        'the capabilities still asked, with back-off, for up to 7 days (GET /core/v1/erasures/{id})',
    }),
  },
  { $id: 'SubjectErasurePending' },
);

export const ErasureSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    state: Type.Union([Type.Literal('complete'), Type.Literal('pending'), Type.Literal('failed')]),
    capabilities: Type.Array(
      Type.Object({
        capability: Type.String(),
        state: Type.Union([
          Type.Literal('complete'),
          Type.Literal('pending'),
          Type.Literal('failed'),
          Type.Literal('skipped'),
        ]),
        erased: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
        attempts: Type.Integer({ minimum: 0 }),
        lastError: Type.Union([Type.String(), Type.Null()]),
      }),
    ),
    createdAt: Type.String({ format: 'date-time' }),
    completedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'Erasure' },
);

export const ErasureTaskListSchema = Type.Object(
  {
    data: Type.Array(
      Type.Object({
        id: Type.String({ format: 'uuid', description: 'the erasure’s id' }),
        projectId: Type.String({ format: 'uuid' }),
        subject: Type.Object({ type: Type.String({ enum: [...SUBJECT_TYPES] }), value: Type.String() }),
        createdAt: Type.String({ format: 'date-time' }),
      }),
      { description: 'the capability’s pending tasks, oldest first (at most 100)' },
    ),
  },
  { $id: 'ErasureTaskList' },
);

export const ErasureTaskCompleteBodySchema = Type.Object(
  { erased: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'how many records' }) },
  { additionalProperties: false, examples: [{ erased: 3 }] },
);

export const ErasureTaskStateSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    state: Type.Union([
      Type.Literal('complete'),
      Type.Literal('pending'),
      Type.Literal('failed'),
      Type.Literal('skipped'),
    ]),
  },
  { $id: 'ErasureTaskState' },
);
