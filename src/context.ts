// Wires the database, the services and the registry into one context; nothing else is global.
import type { Logger } from 'pino';
import { CapabilityRegistry } from './capabilities.ts';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { healthService, idleQueue, type QueueMonitor } from './health/service.ts';
import { keyCache } from './http/auth.ts';
import { keyService } from './keys/service.ts';

export interface Context {
  config: Config;
  db: Database;
  log: Logger;
  registry: CapabilityRegistry;
  health: ReturnType<typeof healthService>;
  checkKey: ReturnType<typeof keyCache>;
}

export function createContext(options: {
  config: Config;
  db: Database;
  log: Logger;
  registry?: CapabilityRegistry;
  queue?: QueueMonitor;
}): Context {
  const { config, db, log } = options;
  const registry = options.registry ?? new CapabilityRegistry();
  const keys = keyService(db);
  return {
    config,
    db,
    log,
    registry,
    health: healthService({ config, db, registry, queue: options.queue ?? idleQueue }),
    checkKey: keyCache((key) => keys.check(key)),
  };
}
