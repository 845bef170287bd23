// The peers by name, each loaded only when asked for (the worker process loads one).
import type { Peer } from './peer.ts';

export const PEERS = ['graphile-worker', 'graphile-worker-batched', 'pg-boss', 'bullmq'] as const;
export type PeerName = (typeof PEERS)[number];

export async function peer(name: PeerName, databaseUrl: string, redisUrl: string): Promise<Peer> {
  switch (name) {
    case 'graphile-worker':
      return (await import('./graphile.ts')).graphile(databaseUrl, false);
    case 'graphile-worker-batched':
      return (await import('./graphile.ts')).graphile(databaseUrl, true);
    case 'pg-boss':
      return (await import('./pg-boss.ts')).pgBoss(databaseUrl);
    case 'bullmq':
      return (await import('./bullmq.ts')).bullmq(redisUrl);
  }
}
