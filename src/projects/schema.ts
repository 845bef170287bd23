import { Type } from 'typebox';

const Colour = Type.String({ pattern: '^#[0-9A-Fa-f]{6}$' });

export const ProjectMeSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    slug: Type.String(),
    name: Type.String(),
    mode: Type.Union([Type.Literal('test'), Type.Literal('live')]),
    languages: Type.Array(Type.String()),
    theme: Type.Object({
      logoUrl: Type.Union([Type.String(), Type.Null()]),
      primary: Colour,
      accent: Colour,
      background: Colour,
      text: Colour,
    }),
  },
  { $id: 'ProjectMe' },
);
