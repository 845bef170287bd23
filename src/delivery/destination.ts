// What the worker sends through: a destination takes one signed delivery and answers how the attempt went,
// whatever carries it. The worker signs, sends through the destination, and decides the delivery's next
// state from the answer (outcome.ts); a new kind of destination is a new file implementing this, not a
// branch in the worker. A webhook's is sender.ts (HTTPS POST through the address policy); a broker's and
// the polling feed's are in brokers/, and brokers/index.ts sends each delivery through its type's.

/** One delivery as it goes out: where, its Standard Webhooks headers, and the payload byte for byte. */
export interface Outgoing {
  /** the endpoint it goes to: what a destination keeps per receiver (a token, a connection) is keyed by it */
  endpointId: string;
  url: string;
  headers: { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string };
  /** the endpoint's own headers, sent too (never in place of the ones above) */
  extra?: Record<string, string>;
  body: string | Buffer;
  /** what the receiver asked to be authenticated with, opened (absent for most) */
  credentials?: Credentials;
  /** the event's type: a broker carries it as x-platform-event-type */
  eventType: string;
  projectId: string;
  eventCreatedAt: Date;
  /** where a destination that is not a webhook sends (absent for a webhook, which sends to `url`) */
  target?: OpenTarget;
}

/** A broker's target with its URL's password opened, or the polling feed. */
export interface OpenTarget {
  type: 'rabbitmq' | 'redis' | 'nats' | 'polling';
  /** the broker's URL, its password in it (empty for polling) */
  url: string;
  exchange?: string;
  routingKey?: string;
  stream?: string;
  maxLen?: number;
  subject?: string;
}

/** OAuth 2.0 client credentials, and a client certificate for mutual TLS, as a send uses them. */
export interface Credentials {
  oauth?: { tokenUrl: string; clientId: string; clientSecret: string; scope?: string; audience?: string };
  tls?: { certificate: string; privateKey: string };
}

/** How an attempt went, in the words of what carried it. */
export interface SendResult {
  /** whether the receiver has it: a 2xx, a broker's confirm or acknowledgement, the feed's append */
  delivered: boolean;
  /** the receiver's HTTP status; null when no answer came */
  statusCode: number | null;
  /** why it failed, when it did without an answer (connection refused, timed out, refused by policy) */
  error: string | null;
  /** the start of the receiver's answer, kept in the attempt log (a broker's: what it acknowledged) */
  responseBody: string | null;
  durationMs: number;
  /** seconds, from a retry-after header on 429 or 503 */
  retryAfter: number | null;
}

export interface Destination {
  send(delivery: Outgoing): Promise<SendResult>;
  /** closes what it keeps open (connections), once the worker has stopped sending */
  close(): Promise<void>;
}

/** The headers a broker's message carries: the endpoint's own, then the Standard Webhooks ones and the type. */
export function messageHeaders(outgoing: Outgoing): Record<string, string> {
  return {
    ...outgoing.extra,
    ...outgoing.headers,
    'x-platform-event-type': outgoing.eventType,
    'content-type': 'application/json',
  };
}
