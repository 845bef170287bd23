// The delivery engine's state on an endpoint (migration 0012): its next free send slot (rate_next_at, read
// and advanced by the claim, pacing.ts) and its run of dead deliveries (dead_streak, kept as attempts are
// recorded). The endpoint's own update resets them with these fragments: a new rate starts from a free
// slot, and an endpoint enabled again starts a new run.

/** SQL: `rate_next_at` forgotten when `changed` (the endpoint's rate was set). */
export const resetRateState = (changed: string) =>
  `rate_next_at = case when ${changed} then null else rate_next_at end`;

/** SQL: `dead_streak` back to 0 when `enabled` (the endpoint was enabled again). */
export const resetDeadStreak = (enabled: string) =>
  `dead_streak = case when ${enabled} then 0 else dead_streak end`;
