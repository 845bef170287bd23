// Projects: created, read, listed and changed (a JSON merge patch) by operators, and by the CLI. Every
// change is audited in its own transaction, naming the fields that changed.

import type { Work } from '../audit/work.ts';
import { notFound, PlatformError } from '../lib/errors.ts';
import { type Page, pageFrom } from '../lib/pagination.ts';
import {
  DEFAULT_THEME,
  type Project,
  type ProjectRow,
  type ProjectValues,
  projectStore,
  type Theme,
  toProject,
} from './store.ts';

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
const COLOUR = /^#[0-9A-Fa-f]{6}$/;
const MAX_LANGUAGES = 20;
const MAX_FRAME_ANCESTORS = 20;
const THEME_FIELDS = ['logoUrl', 'primary', 'accent', 'background', 'text'] as const;

export interface NewProject {
  slug: string;
  name: string;
  mode?: string;
  languages?: string[];
  theme?: Partial<Theme>;
}

/** A JSON merge patch (RFC 7396) of a project: a member absent is unchanged; null resets where it can. */
export interface ProjectPatch {
  name?: string;
  languages?: string[];
  theme?: { [K in keyof Theme]?: Theme[K] | null };
  retentionDays?: number | null;
  portalFrameAncestors?: string[] | null;
}

const invalid = (pointer: string, detail: string) =>
  new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer, detail }] });

/** BCP 47 tags, canonical (en-us → en-US), 1-20 and distinct. */
export function canonicalLanguages(tags: string[]): string[] {
  if (tags.length === 0 || tags.length > MAX_LANGUAGES)
    throw invalid('/languages', `a project has 1 to ${MAX_LANGUAGES} languages`);
  const canonical = tags.map((tag, i) => {
    try {
      const [found] = Intl.getCanonicalLocales(tag);
      if (found) return found;
    } catch {}
    throw invalid(`/languages/${i}`, `"${tag}" is not a BCP 47 language tag (such as en, fr, pt-BR)`);
  });
  if (new Set(canonical).size !== canonical.length)
    throw invalid('/languages', 'the languages must be distinct');
  return canonical;
}

function checkTheme(theme: Theme): Theme {
  for (const field of THEME_FIELDS) {
    const value = theme[field];
    if (field === 'logoUrl') {
      if (value !== null && !httpsUrl(value, 2048))
        throw invalid('/theme/logoUrl', 'logoUrl is null or an https URL of at most 2048 characters');
    } else if (typeof value !== 'string' || !COLOUR.test(value)) {
      throw invalid(`/theme/${field}`, `${field} is a colour written #RRGGBB`);
    }
  }
  return theme;
}

const httpsUrl = (value: string, max: number) => {
  if (value.length > max) return false;
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
};

/**
 * A host as a CSP source may name it (`[*.]label.label`, letters, digits and hyphens): anything else would
 * end the portal's policy early (`;` starts a directive, `,` another policy, `'` a keyword).
 */
const CSP_HOST = /^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*$/;

/** https origins (scheme, host and port only), distinct: where the project's portal may be framed. */
function checkFrameAncestors(origins: string[]): string[] {
  if (origins.length > MAX_FRAME_ANCESTORS)
    throw invalid('/portalFrameAncestors', `at most ${MAX_FRAME_ANCESTORS} origins`);
  return origins.map((origin, i) => {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {}
    if (
      parsed?.protocol !== 'https:' ||
      parsed.origin !== origin.replace(/\/$/, '') ||
      !CSP_HOST.test(parsed.hostname)
    )
      throw invalid(
        `/portalFrameAncestors/${i}`,
        `"${origin}" is not an https origin such as https://app.example.com`,
      );
    return parsed.origin;
  });
}

function checkValues(values: ProjectValues): ProjectValues {
  if (values.name.trim().length === 0 || values.name.length > 200)
    throw invalid('/name', 'name must be 1-200 characters');
  if (values.retentionDays !== null && !(values.retentionDays >= 1 && values.retentionDays <= 400))
    throw invalid('/retentionDays', 'retentionDays is null (the default) or 1 to 400 days');
  return {
    ...values,
    languages: canonicalLanguages(values.languages),
    theme: checkTheme(values.theme),
    portalFrameAncestors: checkFrameAncestors(values.portalFrameAncestors),
  };
}

/** The values a patch gives, over the current ones; the names of the fields it changes. */
function applyPatch(
  current: ProjectValues,
  patch: ProjectPatch,
): { values: ProjectValues; changed: string[] } {
  const theme = { ...current.theme };
  for (const field of THEME_FIELDS) {
    const value = patch.theme?.[field];
    if (value === undefined) continue;
    if (value === null && field !== 'logoUrl') throw invalid(`/theme/${field}`, `${field} cannot be removed`);
    (theme as Record<string, string | null>)[field] = value;
  }
  const values = checkValues({
    name: patch.name ?? current.name,
    languages: patch.languages ?? current.languages,
    theme,
    retentionDays: patch.retentionDays === undefined ? current.retentionDays : patch.retentionDays,
    portalFrameAncestors:
      patch.portalFrameAncestors === undefined
        ? current.portalFrameAncestors
        : (patch.portalFrameAncestors ?? []),
  });
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const changed = [
    ...(['name', 'languages', 'retentionDays', 'portalFrameAncestors'] as const).filter(
      (field) => !same(values[field], current[field]),
    ),
    ...THEME_FIELDS.filter((field) => values.theme[field] !== current.theme[field]).map(
      (field) => `theme.${field}`,
    ),
  ];
  return { values, changed };
}

const valuesOf = (row: ProjectRow): ProjectValues => ({
  name: row.name,
  languages: row.languages,
  theme: row.theme,
  retentionDays: row.retention_days,
  portalFrameAncestors: row.portal_frame_ancestors,
});

export const projectService = ({ db, audit }: Work) => {
  const store = projectStore(db);
  return {
    async create(input: NewProject): Promise<Project> {
      if (!SLUG.test(input.slug))
        throw invalid('/slug', 'slug must be 1-63 of a-z, 0-9 and "-", starting with a letter or digit');
      const mode = input.mode ?? 'test';
      if (mode !== 'test' && mode !== 'live') throw invalid('/mode', 'mode must be test or live');
      const values = checkValues({
        name: input.name,
        languages: input.languages ?? ['en'],
        theme: { ...DEFAULT_THEME, ...input.theme },
        retentionDays: null,
        portalFrameAncestors: [],
      });
      const row = await store.insert({ slug: input.slug, mode, ...values });
      if (!row) throw new PlatformError('SLUG_TAKEN', `a project with slug "${input.slug}" already exists`);
      audit({
        action: 'project.created',
        projectId: row.id,
        target: { type: 'project', id: row.id },
        fields: Object.keys(input).filter((field) => input[field as keyof NewProject] !== undefined),
      });
      return toProject(row);
    },

    async get(id: string): Promise<Project> {
      const row = await store.find({ id });
      if (!row) throw notFound('project');
      return toProject(row);
    },

    async findBySlug(slug: string): Promise<Project | undefined> {
      const row = await store.find({ slug });
      return row && toProject(row);
    },

    async list(slugPrefix: string | undefined, page: Page) {
      const rows = await store.list(slugPrefix, page);
      const listed = pageFrom(rows, page.limit, (row) => ({ at: row.created_at, id: row.id }));
      return { data: listed.data.map(toProject), nextCursor: listed.nextCursor };
    },

    /** Applies a merge patch; `projects/me` shows it within 5 s on every process (the key cache's life). */
    async update(id: string, patch: ProjectPatch): Promise<Project> {
      const current = await store.find({ id }, { lock: true });
      if (!current) throw notFound('project');
      const { values, changed } = applyPatch(valuesOf(current), patch);
      if (changed.length === 0) return toProject(current);
      const row = await store.update(id, values);
      audit({
        action: 'project.updated',
        projectId: id,
        target: { type: 'project', id },
        fields: changed,
      });
      return toProject(row);
    },
  };
};
