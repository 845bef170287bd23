import type { Db } from '../db/database.ts';
import { PlatformError } from '../errors.ts';
import { projectStore } from './store.ts';

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/; // a BCP 47 tag such as en, fr, pt-BR

export interface NewProject {
  slug: string;
  name: string;
  mode?: string;
  languages?: string[];
}

export const projectService = (db: Db) => {
  const store = projectStore(db);
  return {
    async create(input: NewProject) {
      const mode = input.mode ?? 'test';
      const languages = input.languages ?? ['en'];
      const invalid = (detail: string) => new PlatformError('VALIDATION_FAILED', detail);
      if (!SLUG.test(input.slug))
        throw invalid('slug must be 1-63 of a-z, 0-9 and "-", starting with a letter or digit');
      if (input.name.trim().length === 0 || input.name.length > 200)
        throw invalid('name must be 1-200 characters');
      if (mode !== 'test' && mode !== 'live') throw invalid('mode must be test or live');
      if (languages.length === 0 || !languages.every((l) => LANGUAGE.test(l))) {
        throw invalid('languages must be language codes such as en,fr,pt-BR');
      }
      const project = await store.insert({ slug: input.slug, name: input.name, mode, languages });
      if (!project) throw invalid(`a project with slug "${input.slug}" already exists`);
      return project;
    },

    findBySlug: (slug: string) => store.findBySlug(slug),
  };
};
