// Request rate limits: a token bucket per API key, `perSecond` refill up to `burst`.
// These are one process's buckets: with N API processes and no REDIS_URL a key gets up to N times its
// rate. With REDIS_URL the processes share buckets (shared-rate-limits.ts), and these are the fallback.
import { LRUCache } from 'lru-cache';

const MAX_BUCKETS = 100_000;

export interface Take {
  allowed: boolean;
  remaining: number;
  /** seconds until a token is available (when refused) */
  retryAfter: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets of the least recently used keys go first when full: a busy key keeps its bucket. */
export function tokenBuckets(options: { perSecond: number; burst: number; now?: () => number }) {
  const { perSecond, burst } = options;
  const now = options.now ?? (() => performance.now());
  const buckets = new LRUCache<string, Bucket>({ max: MAX_BUCKETS });

  return {
    enabled: perSecond > 0 && burst > 0,
    take(id: string): Take {
      const t = now();
      let bucket = buckets.get(id);
      if (!bucket) {
        bucket = { tokens: burst, at: t };
        buckets.set(id, bucket);
      } else {
        bucket.tokens = Math.min(burst, bucket.tokens + ((t - bucket.at) / 1000) * perSecond);
        bucket.at = t;
      }
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { allowed: true, remaining: Math.floor(bucket.tokens), retryAfter: 0 };
      }
      return {
        allowed: false,
        remaining: 0,
        retryAfter: Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)),
      };
    },
  };
}

export type TokenBuckets = ReturnType<typeof tokenBuckets>;
