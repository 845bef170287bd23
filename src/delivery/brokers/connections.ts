// A worker's connections to brokers: one per destination, opened on its first send, reused while its
// target stays the same, closed after a minute unused. A connection that broke is forgotten, and the next
// one is opened only after a back-off (1 s, doubling to 30 s): the sends to a broker that is down fail at
// once meanwhile, saying why, and their deliveries wait on their schedule as a slow endpoint's do, while
// every other destination goes on through its own connection.
//
// The broker's host passes the address policy before any connection: a name is resolved here, each of
// its addresses checked, and the connection made to the address checked (so a second resolution cannot
// turn it inward); a TLS connection still names the host it meant.
import { isIP } from 'node:net';
import { checkAddress, type Resolver } from '../../webhooks/address-policy.ts';

const IDLE_MS = 60_000;
const FIRST_BACKOFF_MS = 1000;
const MOST_BACKOFF_MS = 30_000;

/** Where to connect for a host: the address to dial, and the name TLS checks the certificate against. */
export interface Dial {
  address: string;
  servername: string;
}

/** The host resolved under the address policy: refused before any socket opens if it is not allowed. */
export async function dial(
  hostname: string,
  policy: { allowPrivate: boolean; resolve: Resolver },
): Promise<Dial> {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    const verdict = policy.allowPrivate ? { allowed: true as const } : checkAddress(host);
    if (!verdict.allowed) throw new Error(`refused: ${verdict.reason}`);
    return { address: host, servername: host };
  }
  const addresses = await policy.resolve(host).catch(() => []);
  if (addresses.length === 0) throw new Error(`${host} does not resolve`);
  if (!policy.allowPrivate) {
    for (const address of addresses) {
      const verdict = checkAddress(address);
      if (!verdict.allowed) throw new Error(`refused: ${host} resolves to ${verdict.reason}`);
    }
  }
  return { address: addresses[0] as string, servername: host };
}

interface Held<C> {
  /** what the connection was opened for (the target's URL and names): another one opens another */
  key: string;
  connection: Promise<C>;
  /** the connection, once open */
  open?: C;
  usedAt: number;
}

/** A connection per destination, each closed by `shut`. */
export class Connections<C> {
  private readonly held = new Map<string, Held<C>>();
  private readonly backoff = new Map<string, { until: number; ms: number; reason: string }>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly shut: (connection: C) => Promise<void>;

  constructor(shut: (connection: C) => Promise<void>) {
    this.shut = shut;
    this.sweeper = setInterval(() => this.sweep(), IDLE_MS / 4).unref();
  }

  /**
   * The destination's connection for `key`: the one held, or a new one by `open` (refused at once while
   * backing off). Sends that ask while it opens share it.
   */
  get(destinationId: string, key: string, open: () => Promise<C>): Promise<C> {
    const now = Date.now();
    const held = this.held.get(destinationId);
    if (held?.key === key) {
      held.usedAt = now;
      return held.connection;
    }
    if (held) this.forget(destinationId);
    const waiting = this.backoff.get(destinationId);
    if (waiting && waiting.until > now) {
      const seconds = Math.ceil((waiting.until - now) / 1000);
      return Promise.reject(new Error(`${waiting.reason} (connecting again in ${seconds} s)`));
    }
    const connection = open();
    const entry: Held<C> = { key, connection, usedAt: now };
    this.held.set(destinationId, entry);
    connection.then(
      (opened) => {
        entry.open = opened;
        this.backoff.delete(destinationId);
      },
      (error: Error) => this.broken(destinationId, error.message, connection),
    );
    return connection;
  }

  /**
   * The destination's connection `which` failed: it is closed and forgotten, and the next waits a back-off.
   * One no longer held (closed here when idle or retargeted, whose end is heard after) changes nothing.
   */
  broken(destinationId: string, reason: string, which: C | Promise<C>) {
    const held = this.held.get(destinationId);
    if (!held || (held.open !== which && held.connection !== which)) return;
    this.forget(destinationId);
    const ms = Math.min((this.backoff.get(destinationId)?.ms ?? FIRST_BACKOFF_MS / 2) * 2, MOST_BACKOFF_MS);
    this.backoff.set(destinationId, { until: Date.now() + ms, ms, reason });
  }

  private forget(destinationId: string) {
    const held = this.held.get(destinationId);
    if (!held) return;
    this.held.delete(destinationId);
    held.connection.then((connection) => this.shut(connection)).catch(() => {});
  }

  /** Closes the connections unused for a minute. */
  private sweep() {
    const idleSince = Date.now() - IDLE_MS;
    for (const [id, held] of this.held) if (held.usedAt < idleSince) this.forget(id);
  }

  async close() {
    clearInterval(this.sweeper);
    const all = [...this.held.values()];
    this.held.clear();
    await Promise.all(all.map((held) => held.connection.then((c) => this.shut(c)).catch(() => {})));
  }
}
