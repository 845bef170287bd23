// What every authenticated request passes after authentication: the key's request rate (429
// RATE_LIMITED), then the project's daily request allowance (429 USAGE_LIMIT_EXCEEDED); an admitted
// request is counted, a refused one is not.
import type { Config } from '../lib/config.ts';
import { PlatformError } from '../lib/errors.ts';
import type { UsageLimits } from './limits.ts';
import type { Meter } from './meter.ts';
import type { Take } from './rate-limits.ts';

/** A key's request rate: this process's buckets, or the buckets every API process shares. */
export interface RateLimiter {
  enabled: boolean;
  take(id: string): Take | Promise<Take>;
}

export function requestLimits(deps: {
  rateLimits: RateLimiter;
  limits: UsageLimits;
  meter: Meter;
  config: Config;
}) {
  const { perSecond, burst } = deps.config.rateLimit;
  const policy = `"requests";q=${burst};w=${Math.max(1, Math.ceil(burst / Math.max(perSecond, 1)))}`;
  const rateRefusal = (take: Take) =>
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
    );

  /** The day's allowance of a project (an operator's key has none to take). */
  function daily(projectId: string | null, refusable: boolean): PlatformError | Promise<void> | undefined {
    if (projectId === null) return undefined;
    const count = () => deps.meter.count(projectId, 'core', 'api_requests');
    const taken = refusable ? deps.limits.tryTake(projectId, 'core', 'api_requests') : true;
    if (taken === true) {
      count();
      return undefined;
    }
    if (taken === false) return deps.limits.refusal(projectId, 'core', 'api_requests');
    return deps.limits.take(projectId, 'core', 'api_requests').then(count);
  }

  return {
    /**
     * Admits the request of a key of a project: undefined when admitted at once (nearly every request
     * with the process's own buckets: the caches decide, at no promise's cost), a refusal, or a promise
     * (the shared buckets in Redis, or the day's count to read). A request the daily allowance may not
     * refuse is counted all the same.
     */
    admit(
      keyId: string,
      projectId: string | null,
      dailyAllowance = true,
    ): PlatformError | Promise<void> | undefined {
      if (!deps.rateLimits.enabled) return daily(projectId, dailyAllowance);
      const take = deps.rateLimits.take(keyId);
      if (!(take instanceof Promise))
        return take.allowed ? daily(projectId, dailyAllowance) : rateRefusal(take);
      return take.then((taken) => {
        if (!taken.allowed) throw rateRefusal(taken);
        const refused = daily(projectId, dailyAllowance);
        if (refused instanceof PlatformError) throw refused;
        return refused;
      });
    },
  };
}

export type RequestLimits = ReturnType<typeof requestLimits>;
