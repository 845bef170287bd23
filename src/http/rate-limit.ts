import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import type { UsageLimits } from '../usage/limits.ts';
import type { Meter } from '../usage/meter.ts';
import { PlatformError } from './errors.ts';

// Request rate limits: a token bucket per API key, `perSecond` refill up to `burst`.
// Per process, on purpose: sharing buckets through PostgreSQL would add a database round trip to every
// request. With N API processes a key gets up to N times the rate; size the limits with that in mind.
const MAX_BUCKETS = 100_000;

export interface Take {
  allowed: boolean;
  remaining: number;
  /** seconds until a token is available (when refused) */
  retryAfter: number;
}

export function tokenBuckets(options: { perSecond: number; burst: number; now?: () => number }) {
  const { perSecond, burst } = options;
  const now = options.now ?? (() => performance.now());
  const buckets = new Map<string, { tokens: number; at: number }>();

  return {
    enabled: perSecond > 0 && burst > 0,
    take(id: string): Take {
      const t = now();
      let bucket = buckets.get(id);
      if (!bucket) {
        if (buckets.size >= MAX_BUCKETS) buckets.delete(buckets.keys().next().value as string); // drop the oldest
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

/**
 * After authentication: the key's request rate (429 RATE_LIMITED), then the project's daily request
 * allowance (429 USAGE_LIMIT_EXCEEDED), then the request is counted. A refused request is not counted.
 */
export function registerRequestLimits(
  app: FastifyInstance,
  deps: { rateLimits: ReturnType<typeof tokenBuckets>; limits: UsageLimits; meter: Meter; config: Config },
) {
  const { perSecond, burst } = deps.config.rateLimit;
  const policy = `"requests";q=${burst};w=${Math.max(1, Math.ceil(burst / Math.max(perSecond, 1)))}`;
  // Callback-style, so that a request the caches admit (nearly all of them) costs no promise.
  app.addHook('onRequest', (request, _reply, done) => {
    const principal = request.principal;
    if (!principal) return done();
    if (deps.rateLimits.enabled) {
      const take = deps.rateLimits.take(principal.keyId);
      if (!take.allowed) {
        return done(
          new PlatformError(
            'RATE_LIMITED',
            `this key may make ${perSecond} requests a second (bursts of ${burst})`,
            {
              headers: {
                'retry-after': String(take.retryAfter),
                'ratelimit-policy': policy,
                ratelimit: `"requests";r=0;t=${take.retryAfter}`,
              },
            },
          ),
        );
      }
    }
    const projectId = principal.project.id;
    const count = () => {
      deps.meter.count(projectId, 'core', 'api_requests');
      done();
    };
    if (deps.limits.admitsFromCache(projectId, 'core', 'api_requests')) return count();
    deps.limits.check(projectId, 'core', 'api_requests').then(count, done);
  });
}
