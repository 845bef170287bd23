// What a claim hands the worker: runs of leased deliveries, each with everything its send needs (a leased
// row joined to its event's body and its endpoint's address here).

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

/** What the claim reads of a due delivery's endpoint for its send (null when the endpoint is gone). */
export interface DueEndpoint {
  url: string | null;
  active_secret: Buffer | null;
  previous_secret: Buffer | null;
  headers_sealed: Buffer | null;
  auth: ClaimedDelivery['auth'];
  auth_secret_sealed: Buffer | null;
  tls_certificate: string | null;
  tls_key_sealed: Buffer | null;
  destination_type: ClaimedDelivery['destination_type'];
  target: ClaimedDelivery['target'];
  target_secret_sealed: Buffer | null;
}

/** What a send needs of its endpoint, read with its due delivery. */
type SendNeeds =
  | 'url'
  | 'active_secret'
  | 'previous_secret'
  | 'headers_sealed'
  | 'auth'
  | 'auth_secret_sealed'
  | 'tls_certificate'
  | 'tls_key_sealed'
  | 'destination_type'
  | 'target'
  | 'target_secret_sealed'
  | 'event_type';

/**
 * A leased row as the claim returns it: an event's type and payload on its first delivery only, its
 * endpoint's address, secrets and headers not yet (they are on its due row).
 */
export type Leased = Omit<ClaimedDelivery, SendNeeds> & {
  first: boolean;
  type: string | null;
  data: string | null;
};

/**
 * The leased deliveries with their bodies, one per event, shared, and their endpoints' address and secrets
 * from their due rows (`dues`, by id). One whose event was not found is left out, as a join would leave
 * it: its lease ends and a later claim sees it again.
 */
export function withBodies(rows: Leased[], dues: Map<string, DueEndpoint>): ClaimedDelivery[] {
  const bodies = new Map<string, { body: Buffer; type: string }>();
  for (const row of rows) {
    if (!row.first || row.type === null) continue;
    const body = `{"id":${JSON.stringify(row.event_id)},"type":${JSON.stringify(row.type)},"timestamp":"${row.event_created_at.toISOString()}","data":${row.data}}`;
    bodies.set(row.event_id, { body: Buffer.from(body), type: row.type });
  }
  return rows.flatMap((row) => {
    const event = bodies.get(row.event_id);
    const due = dues.get(row.id);
    if (event === undefined || due?.url == null || !due.active_secret) return [];
    const { url, active_secret, previous_secret, headers_sealed } = due;
    const { auth, auth_secret_sealed, tls_certificate, tls_key_sealed } = due;
    const { destination_type, target, target_secret_sealed } = due;
    const needs = {
      url,
      active_secret,
      previous_secret,
      headers_sealed,
      body: event.body,
      event_type: event.type,
    };
    const credentials = { auth, auth_secret_sealed, tls_certificate, tls_key_sealed };
    const destination = { destination_type, target, target_secret_sealed };
    return [Object.assign(row, needs, credentials, destination)];
  });
}
