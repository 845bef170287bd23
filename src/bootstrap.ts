// The first start of an empty database (`platform start`): project `dev` with one key holding every
// scope, printed once. Two processes starting at once create it once: the slug's unique index decides.
import type { Db } from './db/database.ts';
import { SCOPES } from './keys/scopes.ts';
import { type CreatedKey, keyService } from './keys/service.ts';
import { projectStore } from './projects/store.ts';

/** On an empty database, creates project `dev` and a key with every scope, and returns the key. */
export async function bootstrap(db: Db): Promise<CreatedKey | undefined> {
  const projects = projectStore(db);
  if ((await projects.count()) > 0) return undefined;
  const project = await projects.insert({
    slug: 'dev',
    name: 'Development',
    mode: 'test',
    languages: ['en'],
  });
  if (!project) return undefined;
  return keyService(db).create(project, [...SCOPES]);
}
