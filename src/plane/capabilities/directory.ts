// The capabilities declared by their manifests, read from the database into the registry when this
// process starts, every 5 s after, at once after a manifest put here, and before the 200 of an operator's
// change in any process (settings/lease.ts): a manifest put elsewhere is seen within 5 s, an operator's
// change (an upstream, an erasure URL, a removal) at its answer.

import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import type { Capability, CapabilityRegistry } from '../../registry.ts';
import { type CapabilityRow, capabilityStore } from './store.ts';

const REFRESH_MS = 5000;

/** What the registry knows of a declared capability. */
export function fromManifest(row: CapabilityRow): Capability {
  const manifest = row.manifest;
  return {
    name: row.name,
    scopes: manifest?.scopes.map((s) => s.name) ?? [],
    metrics: manifest?.metrics.map((m) => m.name) ?? [],
    limits: (manifest?.metrics ?? []).flatMap((m) =>
      m.defaultDailyLimit === undefined ? [] : [{ metric: m.name, dailyLimit: m.defaultDailyLimit }],
    ),
    eventTypes: (manifest?.eventTypes ?? []).map((t) => ({
      name: t.name,
      description: t.description,
      ...(t.schema ? { schema: t.schema } : {}),
      ...(t.example ? { example: t.example } : {}),
    })),
    providers: manifest?.providers.map((p) => p.name) ?? [],
    grants: row.grants,
    ...erasureOf(row),
    ...(manifest?.gateway && row.upstream
      ? { gateway: { upstream: row.upstream, routes: manifest.gateway.routes } }
      : {}),
  };
}

/** How the capability is asked to erase; push only where the operator gave it an address. */
function erasureOf(row: CapabilityRow): Pick<Capability, 'erasure'> {
  const erasure = row.manifest?.erasure;
  if (erasure?.mode === 'pull') return { erasure: { mode: 'pull' } };
  if (erasure?.mode === 'push' && row.erasure_url)
    return { erasure: { mode: 'push', url: row.erasure_url, timeoutSeconds: erasure.timeoutSeconds ?? 10 } };
  return {};
}

export class CapabilityDirectory {
  readonly #db: Db;
  readonly #registry: CapabilityRegistry;
  readonly #log: Logger;
  #timer: NodeJS.Timeout | undefined;
  /** reads started and applied: a read that ends after a later one began keeps nothing */
  #started = 0;
  #applied = 0;

  constructor(deps: { db: Db; registry: CapabilityRegistry; log: Logger }) {
    this.#db = deps.db;
    this.#registry = deps.registry;
    this.#log = deps.log;
  }

  /** Reads the declared capabilities again; a failure keeps the last ones read (and is logged). */
  async refresh(): Promise<void> {
    try {
      await this.reload();
    } catch (error) {
      this.#log.warn({ err: error }, 'reading the capabilities failed; the last ones read still apply');
    }
  }

  /** Reads the declared capabilities again, or throws. */
  async reload(): Promise<void> {
    const read = ++this.#started;
    const rows = await capabilityStore(this.#db).list();
    if (read < this.#applied) return;
    this.#applied = read;
    this.#registry.declare(rows.map(fromManifest));
  }

  async start() {
    await this.refresh();
    this.#timer = setInterval(() => void this.refresh(), REFRESH_MS);
    this.#timer.unref();
  }

  stop() {
    clearInterval(this.#timer);
  }
}
