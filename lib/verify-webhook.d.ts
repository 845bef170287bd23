export declare class WebhookVerificationError extends Error {}

export interface PlatformEvent<Data = Record<string, unknown>> {
  id: string;
  type: string;
  timestamp: string;
  data: Data;
}

/**
 * Verifies a platform-core webhook delivery (Standard Webhooks) against every secret the receiver holds.
 * Returns the parsed event, or throws WebhookVerificationError.
 */
export declare function verifyWebhook<Data = Record<string, unknown>>(
  rawBody: string | Buffer,
  headers: Record<string, string | string[] | undefined> | Headers,
  secrets: (string | Buffer)[],
  options?: { toleranceSeconds?: number; now?: number },
): PlatformEvent<Data>;
