// `platform migrate`: the pending migrations applied, and nothing of the service loaded.

import { migrate } from '../db/migrate.ts';
import type { Config } from '../lib/config.ts';
import { connect, createLogger } from './runtime.ts';

export async function migrateCommand(config: Config) {
  const connection = await connect(config, 'command', createLogger({ ...config, logLevel: 'warn' }));
  try {
    const applied = await migrate(connection.db);
    console.log(applied.length ? `applied ${applied.join(', ')}` : 'no pending migrations');
  } finally {
    await connection.close();
  }
}
