import { Type } from 'typebox';
import { pageFields } from '../lib/pagination.ts';

const Colour = Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', description: '#RRGGBB' });
const LogoUrl = Type.Union([Type.String({ maxLength: 2048, description: 'an https URL' }), Type.Null()]);
const Mode = Type.Union([Type.Literal('test'), Type.Literal('live')]);
const Languages = Type.Array(Type.String({ maxLength: 64, description: 'a BCP 47 tag' }), {
  minItems: 1,
  maxItems: 20,
  description: '1-20 distinct BCP 47 tags, stored canonical (en-us → en-US)',
});

const ThemeSchema = Type.Object({
  logoUrl: LogoUrl,
  primary: Colour,
  accent: Colour,
  background: Colour,
  text: Colour,
});

const projectMeFields = {
  id: Type.String({ format: 'uuid' }),
  slug: Type.String(),
  name: Type.String(),
  mode: Mode,
  languages: Type.Array(Type.String()),
  theme: ThemeSchema,
};

export const ProjectMeSchema = Type.Object(projectMeFields, {
  $id: 'ProjectMe',
  examples: [
    {
      id: '0193a8f2-5b1c-7e3d-8a4f-6c2b9d0e1f3a',
      slug: 'notify',
      name: 'Notify',
      mode: 'live',
      languages: ['en', 'fr'],
      theme: { logoUrl: null, primary: '#1D4ED8', accent: '#0F766E', background: '#FFFFFF', text: '#111827' },
    },
  ],
});

export const ProjectSchema = Type.Object(
  {
    ...projectMeFields,
    retentionDays: Type.Union([Type.Integer(), Type.Null()], {
      description: "null: the installation's default",
    }),
    portalFrameAncestors: Type.Array(Type.String(), {
      description: 'https origins that may frame the portal',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Project' },
);

export const ProjectPageSchema = Type.Object(
  {
    data: Type.Array(Type.Unsafe<unknown>({ $ref: 'Project#' })),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'ProjectPage' },
);

/** A project as a capability granted `projects:read` sees it: who it is, nothing of its settings. */
export const CapabilityProjectPageSchema = Type.Object(
  {
    data: Type.Array(
      Type.Object({
        id: Type.String({ format: 'uuid' }),
        slug: Type.String(),
        name: Type.String(),
        mode: Type.Union([Type.Literal('test'), Type.Literal('live')]),
        createdAt: Type.String({ format: 'date-time' }),
      }),
    ),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'CapabilityProjectPage' },
);

const Name = Type.String({ minLength: 1, maxLength: 200 });

export const CreateProjectBodySchema = Type.Object(
  {
    slug: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$', description: 'never changes' }),
    name: Name,
    mode: Type.Optional(Mode),
    languages: Type.Optional(Languages),
    theme: Type.Optional(Type.Partial(ThemeSchema, { additionalProperties: false })),
  },
  {
    additionalProperties: false,
    examples: [
      {
        slug: 'notify',
        name: 'Notify',
        mode: 'live',
        languages: ['en', 'fr'],
        theme: { primary: '#1D4ED8' },
      },
    ],
  },
);

/** A JSON merge patch: slug, mode and id are not members (they never change), so sending them is 400. */
export const ProjectPatchSchema = Type.Object(
  {
    name: Type.Optional(Name),
    languages: Type.Optional(Languages),
    theme: Type.Optional(
      Type.Object(
        {
          logoUrl: Type.Optional(LogoUrl),
          primary: Type.Optional(Colour),
          accent: Type.Optional(Colour),
          background: Type.Optional(Colour),
          text: Type.Optional(Colour),
        },
        { additionalProperties: false },
      ),
    ),
    retentionDays: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 400 }), Type.Null()])),
    portalFrameAncestors: Type.Optional(
      Type.Union([Type.Array(Type.String({ maxLength: 2048 }), { maxItems: 20 }), Type.Null()]),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ languages: ['en', 'fr', 'de'], portalFrameAncestors: ['https://dashboard.example.com'] }],
  },
);

export const ProjectListQuerySchema = Type.Object(
  {
    slugPrefix: Type.Optional(Type.String({ pattern: '^[a-z0-9-]{1,63}$' })),
    ...pageFields,
  },
  { additionalProperties: false },
);
