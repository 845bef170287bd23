// What every authenticated request passes after authentication: the key's request rate (429
// RATE_LIMITED), then the project's daily request allowance (429 USAGE_LIMIT_EXCEEDED); an admitted
// request is counted, a refused one is not.
import type { Config } from '../config.ts';
import { PlatformError } from '../errors.ts';
import type { UsageLimits } from './limits.ts';
import type { Meter } from './meter.ts';
import type { TokenBuckets } from './rate-limits.ts';

export function requestLimits(deps: {
  rateLimits: TokenBuckets;
  limits: UsageLimits;
  meter: Meter;
  config: Config;
}) {
  const { perSecond, burst } = deps.config.rateLimit;
  const policy = `"requests";q=${burst};w=${Math.max(1, Math.ceil(burst / Math.max(perSecond, 1)))}`;

  return {
    /**
     * Admits the request of a key of a project: undefined when admitted at once (nearly every request: the
     * caches decide, at no promise's cost), a refusal, or a promise when the day's count must be read.
     * A request the daily allowance may not refuse is counted all the same.
     */
    admit(
      keyId: string,
      projectId: string | null,
      dailyAllowance = true,
    ): PlatformError | Promise<void> | undefined {
      if (deps.rateLimits.enabled) {
        const take = deps.rateLimits.take(keyId);
        if (!take.allowed) {
          return new PlatformError(
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
        }
      }
      if (projectId === null) return undefined; // an operator's key: no project's allowance to take
      const count = () => deps.meter.count(projectId, 'core', 'api_requests');
      const taken = dailyAllowance ? deps.limits.tryTake(projectId, 'core', 'api_requests') : true;
      if (taken === true) {
        count();
        return undefined;
      }
      if (taken === false) return deps.limits.refusal(projectId, 'core', 'api_requests');
      return deps.limits.take(projectId, 'core', 'api_requests').then(count);
    },
  };
}

export type RequestLimits = ReturnType<typeof requestLimits>;
