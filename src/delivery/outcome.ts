// What an attempt's answer means: the delivery's next state (delivered; retried, and when; or dead), and
// how the attempt is counted in the metrics.

import type { Completion } from '../delivery-store/record.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { SendResult } from './destination.ts';

const MAX_RETRY_AFTER_SECONDS = 3600;

/**
 * After attempt number `attempt`: a 2xx is delivered; a 410 or the last attempt of the schedule is dead;
 * anything else is retried after the schedule's delay (±10 % jitter), or after the receiver's
 * retry-after (429, 503) between 1 s and an hour.
 */
export function nextState(
  attempt: number,
  succeeded: boolean,
  result: SendResult,
  scheduleSeconds: number[],
): Pick<Completion, 'state' | 'retryIn'> {
  if (succeeded) return { state: 'delivered', retryIn: 0 };
  if (result.statusCode === 410 || attempt > scheduleSeconds.length) return { state: 'dead', retryIn: 0 };
  if (result.retryAfter !== null) {
    return { state: 'pending', retryIn: Math.min(Math.max(result.retryAfter, 1), MAX_RETRY_AFTER_SECONDS) };
  }
  const scheduled = scheduleSeconds[attempt - 1] ?? 0;
  return { state: 'pending', retryIn: scheduled * (0.9 + Math.random() * 0.2) };
}

export type AttemptMetrics = 'attempts' | 'attemptDuration' | 'deliveryLag';

/** An attempt by outcome (failed: to be retried), its duration, and a delivery's lag from its event. */
export function countAttempt(metrics: Pick<Metrics, AttemptMetrics>, completion: Completion) {
  const outcome = completion.state === 'pending' ? 'failed' : completion.state;
  metrics.attempts.inc({ outcome });
  metrics.attemptDuration.observe({ outcome }, completion.durationMs / 1000);
  if (completion.succeeded) {
    metrics.deliveryLag.observe((Date.now() - completion.eventCreatedAt.getTime()) / 1000);
  }
}
