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
    capabilities: Type.Array(
      Type.Object({ capability: Type.String(), erased: Type.Integer({ minimum: 0 }) }),
    ),
  },
  { $id: 'SubjectErased' },
);
