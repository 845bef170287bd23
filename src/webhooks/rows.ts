// The shapes of an endpoint's row as read, and of what a create or a PATCH writes to it (store.ts).
import type { AuthPublic } from './credentials.ts';
import type { ClearTarget, DestinationType } from './targets.ts';

export interface EndpointRow {
  id: string;
  url: string;
  event_types: string[];
  active: boolean;
  paused: boolean;
  rate_limit_per_second: number | null;
  ordering: 'none' | 'endpoint' | 'key';
  waiting: number;
  has_previous_secret: boolean;
  name: string | null;
  description: string | null;
  metadata: Record<string, string>;
  header_names: string[];
  filter: Record<string, unknown> | null;
  auth: AuthPublic | null;
  tls_certificate: string | null;
  destination_type: DestinationType;
  target: ClearTarget | null;
  created_at: Date;
}

/** A new endpoint, its id, secret and time made by the service. */
export interface NewEndpoint {
  id: string;
  url: string;
  eventTypes: string[];
  sealedSecret: Buffer;
  createdAt: Date;
  name: string | null;
  description: string | null;
  metadata: Record<string, string>;
  headerNames: string[];
  sealedHeaders: Buffer | null;
  /** the filter as given, and compiled (webhooks/filter.ts); null for none */
  filter: { pattern: Record<string, unknown>; path: string } | null;
  auth: SealedAuth | null;
  tls: SealedTls | null;
}

/** A destination's target that is not a webhook's: kept in clear, and the password of its URL sealed. */
export interface SealedTarget {
  type: Exclude<DestinationType, 'webhook'>;
  clear: ClearTarget;
  sealed: Buffer | null;
}

/** OAuth client credentials: what is kept in clear, and the client secret sealed. */
export interface SealedAuth {
  clear: AuthPublic;
  sealed: Buffer;
}

/** A client certificate, and its private key sealed. */
export interface SealedTls {
  certificate: string;
  sealed: Buffer;
}

/** The row a new endpoint has: its columns' defaults (migrations 0003 and 0012), nothing pending. */
export const newEndpointRow = (endpoint: NewEndpoint): EndpointRow => ({
  id: endpoint.id,
  url: endpoint.url,
  event_types: endpoint.eventTypes,
  active: true,
  paused: false,
  rate_limit_per_second: null,
  ordering: 'none',
  waiting: 0,
  has_previous_secret: false,
  name: endpoint.name,
  description: endpoint.description,
  metadata: endpoint.metadata,
  header_names: endpoint.headerNames,
  filter: endpoint.filter?.pattern ?? null,
  auth: endpoint.auth?.clear ?? null,
  tls_certificate: endpoint.tls?.certificate ?? null,
  destination_type: 'webhook',
  target: null,
  created_at: endpoint.createdAt,
});

/** What a PATCH may change (docs/api.md, Steering delivery). */
export interface EndpointChange {
  url?: string;
  eventTypes?: string[];
  rateLimitPerSecond?: number | null;
  ordering?: 'none' | 'endpoint' | 'key';
  active?: boolean;
  name?: string | null;
  description?: string | null;
  /** the whole metadata after the patch's merge */
  metadata?: Record<string, string>;
  /** the whole headers after the patch's merge: their names, and their values sealed (null for none) */
  headers?: { names: string[]; sealed: Buffer | null };
  /** the filter as given and compiled, or null to remove it */
  filter?: { pattern: Record<string, unknown>; path: string } | null;
  /** new client credentials, or null to remove them */
  auth?: SealedAuth | null;
  /** a new client certificate, or null to remove it */
  tls?: SealedTls | null;
}
