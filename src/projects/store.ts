import { type Db, onlyRow } from '../db/database.ts';

export interface Theme {
  logoUrl: string | null;
  primary: string;
  accent: string;
  background: string;
  text: string;
}

export interface ProjectRow {
  id: string;
  slug: string;
  name: string;
  mode: 'test' | 'live';
  languages: string[];
  theme: Theme;
}

/** The ProjectMe record of the spec. */
export type ProjectMe = ProjectRow;

export const toProjectMe = (row: ProjectRow): ProjectMe => ({
  id: row.id,
  slug: row.slug,
  name: row.name,
  mode: row.mode,
  languages: row.languages,
  theme: row.theme,
});

const COLUMNS = 'id, slug, name, mode, languages, theme';

export const projectStore = (db: Db) => ({
  /** Inserts the project; undefined when the slug is taken (the unique index decides, not a prior read). */
  async insert(project: { slug: string; name: string; mode: 'test' | 'live'; languages: string[] }) {
    const { rows } = await db.query<ProjectRow>(
      `insert into projects (slug, name, mode, languages)
       values ($1, $2, $3, $4)
       on conflict (slug) do nothing
       returning ${COLUMNS}`,
      [project.slug, project.name, project.mode, project.languages],
    );
    return rows[0] && toProjectMe(rows[0]);
  },

  async findBySlug(slug: string) {
    const { rows } = await db.query<ProjectRow>(`select ${COLUMNS} from projects where slug = $1`, [slug]);
    return rows[0] && toProjectMe(rows[0]);
  },

  async count() {
    return onlyRow(await db.query<{ count: number }>('select count(*) as count from projects')).count;
  },
});
