import { type Db, isoColumn, onlyRow } from '../db/database.ts';
import { keyset, type Page } from '../lib/pagination.ts';

export interface Theme {
  logoUrl: string | null;
  primary: string;
  accent: string;
  background: string;
  text: string;
}

export const DEFAULT_THEME: Theme = {
  logoUrl: null,
  primary: '#1F6FEB',
  accent: '#8250DF',
  background: '#FFFFFF',
  text: '#1F2328',
};

export interface ProjectRow {
  id: string;
  slug: string;
  name: string;
  mode: 'test' | 'live';
  languages: string[];
  theme: Theme;
  retention_days: number | null;
  portal_frame_ancestors: string[];
  created_at: string;
  updated_at: string;
}

/** The ProjectMe record of the spec: what a project's own key sees. */
export interface ProjectMe {
  id: string;
  slug: string;
  name: string;
  mode: 'test' | 'live';
  languages: string[];
  theme: Theme;
}

/** The Project record of the management API (docs/management.md). */
export interface Project extends ProjectMe {
  retentionDays: number | null;
  portalFrameAncestors: string[];
  createdAt: string;
  updatedAt: string;
}

export const toProjectMe = (row: Pick<ProjectRow, keyof ProjectMe>): ProjectMe => ({
  id: row.id,
  slug: row.slug,
  name: row.name,
  mode: row.mode,
  languages: row.languages,
  theme: row.theme,
});

export const toProject = (row: ProjectRow): Project => ({
  ...toProjectMe(row),
  retentionDays: row.retention_days,
  portalFrameAncestors: row.portal_frame_ancestors,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const COLUMNS = `id, slug, name, mode, languages, theme, retention_days, portal_frame_ancestors, ${isoColumn('created_at')},
  ${isoColumn('updated_at')}`;

export interface ProjectValues {
  name: string;
  languages: string[];
  theme: Theme;
  retentionDays: number | null;
  portalFrameAncestors: string[];
}

export const projectStore = (db: Db) => ({
  /** Inserts the project; undefined when the slug is taken (the unique index decides, not a prior read). */
  async insert(project: { slug: string; mode: 'test' | 'live' } & ProjectValues) {
    const { rows } = await db.query<ProjectRow>(
      `insert into projects (slug, name, mode, languages, theme, retention_days, portal_frame_ancestors)
       values ($1, $2, $3, $4, $5, $6, $7)
       on conflict (slug) do nothing
       returning ${COLUMNS}`,
      [
        project.slug,
        project.name,
        project.mode,
        project.languages,
        JSON.stringify(project.theme),
        project.retentionDays,
        project.portalFrameAncestors,
      ],
    );
    return rows[0];
  },

  async find(by: { id?: string; slug?: string }, options: { lock?: boolean } = {}) {
    const { rows } = await db.query<ProjectRow>(
      `select ${COLUMNS} from projects where id = $1 or slug = $2 ${options.lock ? 'for update' : ''}`,
      [by.id ?? null, by.slug ?? null],
    );
    return rows[0];
  },

  /** Oldest first; with a slug prefix, only the projects whose slug starts with it. */
  async list(slugPrefix: string | undefined, page: Page) {
    const paged = keyset(page, { at: 'created_at', order: 'oldest', first: 2 });
    const { rows } = await db.query<ProjectRow>(
      `select ${COLUMNS} from projects where ($1::text is null or starts_with(slug, $1)) ${paged.sql}`,
      [slugPrefix ?? null, ...paged.values],
    );
    return rows;
  },

  async update(id: string, values: ProjectValues) {
    return onlyRow(
      await db.query<ProjectRow>(
        `update projects
            set name = $2, languages = $3, theme = $4, retention_days = $5, portal_frame_ancestors = $6,
                updated_at = now()
          where id = $1
         returning ${COLUMNS}`,
        [
          id,
          values.name,
          values.languages,
          JSON.stringify(values.theme),
          values.retentionDays,
          values.portalFrameAncestors,
        ],
      ),
    );
  },

  async count() {
    return onlyRow(await db.query<{ count: number }>('select count(*) as count from projects')).count;
  },
});
