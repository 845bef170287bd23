import { Type } from 'typebox';
import { EVENT_TYPE } from '../events/schema.ts';
import { MAX_URL_LENGTH } from './address-policy.ts';

const EVENT_TYPE_PATTERN = `^(\\*|${EVENT_TYPE})$`;

export const EventTypesSchema = Type.Array(
  Type.String({
    maxLength: 128,
    pattern: EVENT_TYPE_PATTERN,
    description: 'a dotted lowercase type, or * for every type',
  }),
  { minItems: 1, maxItems: 50, uniqueItems: true },
);

export const CreateEndpointBodySchema = Type.Object(
  {
    url: Type.String({ format: 'uri', maxLength: MAX_URL_LENGTH, description: 'a public HTTPS address' }),
    eventTypes: EventTypesSchema,
  },
  { additionalProperties: false },
);

const endpointFields = {
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  eventTypes: Type.Array(Type.String()),
  active: Type.Boolean(),
  hasPreviousSecret: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
};

export const WebhookEndpointSchema = Type.Object(endpointFields, { $id: 'WebhookEndpoint' });
export const WebhookEndpointCreatedSchema = Type.Object(
  { ...endpointFields, secret: Type.String({ description: 'whsec_…, shown this one time only' }) },
  { $id: 'WebhookEndpointCreated' },
);
export const WebhookEndpointListSchema = Type.Object(
  { data: Type.Array(Type.Unsafe<unknown>({ $ref: 'WebhookEndpoint#' })) },
  { $id: 'WebhookEndpointList' },
);
export const WebhookSecretRotatedSchema = Type.Object(
  { id: Type.String({ format: 'uuid' }), secret: Type.String() },
  { $id: 'WebhookSecretRotated' },
);

/** A path id. One that is not a UUID names nothing: 404, like an id of another project (see fault.ts). */
export const IdParamsSchema = Type.Object({ id: Type.String({ format: 'uuid' }) });
