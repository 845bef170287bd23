// The first start of an empty database (`platform start`): project `dev` with one key holding every
// scope, printed once. Two processes starting at once create it once: the slug's unique index decides.
import { randomUUID } from 'node:crypto';
import { auditInto } from '../audit/store.ts';
import type { Database } from '../db/database.ts';
import { type CreatedKey, keyService } from '../keys/service.ts';
import { PlatformError } from '../lib/errors.ts';
import { projectService } from '../projects/service.ts';
import { projectStore } from '../projects/store.ts';

/** On an empty database, creates project `dev` and a key with every scope, and returns the key. */
export async function bootstrap(db: Database): Promise<CreatedKey | undefined> {
  if ((await projectStore(db).count()) > 0) return undefined;
  try {
    return await db.transaction(async (tx, hooks) => {
      const audit = auditInto({ actor: { type: 'cli' }, requestId: randomUUID() }, hooks);
      const work = { db: tx, hooks, audit };
      const project = await projectService(work).create({ slug: 'dev', name: 'Development' });
      return keyService(work).create(project, { scopes: ['all'] });
    });
  } catch (error) {
    if (error instanceof PlatformError && error.code === 'SLUG_TAKEN') return undefined; // another made it
    throw error;
  }
}
