// What a claim hands the worker: runs of leased deliveries, each with everything its send needs.

export const DESTINATION_TYPES = ['webhook', 'rabbitmq', 'redis', 'nats', 'polling'] as const;
/** What a destination is (contract 0.4): a webhook endpoint, a broker's, or a feed to poll. */
export type DestinationType = (typeof DESTINATION_TYPES)[number];

/** A broker's target as kept in clear (webhooks/targets.ts): its URL without the password, and the rest. */
export interface ClearTarget {
  url?: string;
  exchange?: string;
  routingKey?: string;
  stream?: string;
  maxLen?: number;
  subject?: string;
  /** whether its URL carried a password (sealed apart) */
  hasPassword?: boolean;
}

export interface ClaimedDelivery {
  project_id: string;
  id: string;
  event_id: string;
  endpoint_id: string;
  /** its ordered lane, or null */
  lane: string | null;
  /** attempts made before this one */
  attempts: number;
  /**
   * What is sent: {"id","type","timestamp","data"}, the payload spliced in as the text PostgreSQL gave (no
   * parse and re-serialise). Made once per event of a claim: a fan-out's deliveries share it.
   */
  body: Buffer;
  event_created_at: Date;
  url: string;
  active_secret: Buffer;
  previous_secret: Buffer | null;
  /** the endpoint's own headers, sealed (null when it asks for none) */
  headers_sealed: Buffer | null;
  /** its OAuth client credentials: what is kept in clear, and the client secret sealed (or null, null) */
  auth: { tokenUrl: string; clientId: string; scope?: string; audience?: string } | null;
  auth_secret_sealed: Buffer | null;
  /** its client certificate, and the private key sealed (or null, null) */
  tls_certificate: string | null;
  tls_key_sealed: Buffer | null;
  /** its destination's type, a broker's target in clear and its password sealed (webhook, null, null) */
  destination_type: DestinationType;
  target: ClearTarget | null;
  target_secret_sealed: Buffer | null;
  /** the event's type (the body has it too) */
  event_type: string;
  /** when to send it (epoch ms, the database's clock): now, or its slot under its endpoint's rate */
  send_at: number;
}

/** Deliveries to send one after the other, by one worker: a lane's head and the run behind it, or one. */
export interface Run {
  endpointId: string;
  deliveries: ClaimedDelivery[];
  /** the database's time at the claim (epoch ms), against which send_at is read */
  claimedAt: number;
}
