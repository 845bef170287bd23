// What every broker's send shares: an attempt bounded in time, and a failure said in the broker's words.
import type { SendResult } from '../destination.ts';

/** An attempt that did not deliver, and why. */
export const failed = (reason: string, durationMs: number): SendResult => ({
  delivered: false,
  statusCode: null,
  error: reason.slice(0, 500),
  responseBody: null,
  durationMs,
  retryAfter: null,
});

/** Delivered, with what the broker answered (its confirm, the entry's id, the stream's sequence). */
export const acknowledged = (answer: string, durationMs: number): SendResult => ({
  delivered: true,
  statusCode: null,
  error: null,
  responseBody: answer,
  durationMs,
  retryAfter: null,
});

/**
 * Runs one send, answered within `timeoutMs` whatever the broker does (`late` says why when it did not
 * answer): an error thrown is a failure in its own words, never an exception out of the worker.
 */
export function timed(
  timeoutMs: number,
  late: string,
  send: (started: number) => Promise<SendResult>,
): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<SendResult>((resolve) => {
    timer = setTimeout(() => resolve(failed(`timed out: ${late}`, elapsed())), timeoutMs);
  });
  const attempt = send(started).catch((error: unknown) => failed(words(error), elapsed()));
  return Promise.race([attempt, timeout]).finally(() => clearTimeout(timer));
}

/** A client's error as a line: connection refused, a host refused by the policy, the broker's reply. */
export function words(error: unknown): string {
  const e = error as { code?: string | number; message?: string };
  if (e.code === 'ECONNREFUSED') return `connection refused (${e.message ?? ''})`;
  return `${e.message ?? String(error)}`.replace(/\s+/g, ' ');
}
