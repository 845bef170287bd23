// Request rate limits shared by every API process through Redis (REDIS_URL): the token bucket of
// rate-limits.ts, kept in Redis and taken from by one script, so that N API processes give a key its
// rate rather than N times it. While Redis does not answer, each process limits alone with its own
// buckets (the service keeps answering), counts each such decision, and says so in its log.
//
// Why a script rather than a limiter library's Redis store: the limit is documented as a token bucket
// (a rate and a burst, with RateLimit headers that say when a token comes back); the fixed windows of
// those stores would give it another meaning in each mode. The script is one round trip, atomic, and
// reads Redis's clock, so processes whose clocks differ agree.
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Take, TokenBuckets } from './rate-limits.ts';

/** KEYS[1] the bucket; ARGV rate per second, burst. Returns {allowed, tokens left as text}. */
const TAKE_SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) + tonumber(time[2]) / 1000000
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(bucket[1]) or burst
local at = tonumber(bucket[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
-- a bucket left alone refills to its burst: forgetting it then changes nothing
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return {allowed, tostring(tokens)}
`;

/** A Redis that does not answer within this long is taken as down for that request. */
const COMMAND_TIMEOUT_MS = 250;
const KEY_PREFIX = 'platform-core:rate:';

type ScriptedRedis = Redis & {
  takeToken(key: string, perSecond: number, burst: number): Promise<[number, string]>;
};

export interface SharedTokenBuckets {
  enabled: boolean;
  take(id: string): Take | Promise<Take>;
  /** true while Redis answers */
  shared(): boolean;
  start(): void;
  stop(): Promise<void>;
}

export function sharedTokenBuckets(options: {
  url: string;
  perSecond: number;
  burst: number;
  /** this process's own buckets: the fallback */
  local: TokenBuckets;
  log: Logger;
  /** called for each decision taken locally because Redis did not answer */
  onFallback: () => void;
}): SharedTokenBuckets {
  const { perSecond, burst, local, log } = options;
  const redis = new Redis(options.url, {
    lazyConnect: true,
    // A request never waits for a connection: without one it is limited locally at once.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    // Commands of one tick go in one write: many requests at once cost one round trip.
    enableAutoPipelining: true,
    retryStrategy: (times) => Math.min(times * 100, 2000), // reconnect for ever, at most every 2 s
  }) as ScriptedRedis;
  redis.defineCommand('takeToken', { numberOfKeys: 1, lua: TAKE_SCRIPT });

  // What the log last said: one line when sharing stops (a closed connection, a failed or slow command)
  // and one when it starts again, not one per request.
  let sharing = false;
  const lost = (reason: string, error?: unknown) => {
    if (!sharing) return;
    sharing = false;
    log.warn(
      { err: error, reason },
      'Redis does not answer: each process limits request rates alone until it does',
    );
  };
  const regained = () => {
    if (sharing) return;
    sharing = true;
    log.info('Redis answers: request rate limits are shared by every API process');
  };
  redis.on('ready', regained);
  redis.on('close', () => lost('connection closed'));
  redis.on('error', (error) => lost('connection error', error)); // a listener also keeps it from ending the process
  const up = () => redis.status === 'ready';

  const alone = (id: string): Take => {
    options.onFallback();
    return local.take(id);
  };

  return {
    enabled: local.enabled,
    shared: up,
    take(id) {
      if (!up()) return alone(id);
      return redis.takeToken(`${KEY_PREFIX}${id}`, perSecond, burst).then(
        ([allowed, left]) => {
          const tokens = Number(left);
          regained(); // after a failed command, the connection stayed up
          return allowed === 1
            ? { allowed: true, remaining: Math.floor(tokens), retryAfter: 0 }
            : { allowed: false, remaining: 0, retryAfter: Math.max(1, Math.ceil((1 - tokens) / perSecond)) };
        },
        (error: unknown) => {
          lost('a command failed', error);
          return alone(id);
        },
      );
    },
    start() {
      redis.connect().catch(() => {}); // 'error' says why; reconnecting goes on
    },
    async stop() {
      redis.disconnect();
    },
  };
}
