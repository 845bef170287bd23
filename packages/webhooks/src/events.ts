// The envelopes a receiver gets, typed from the OpenAPI document's `webhooks` (src/openapi.ts is generated
// from the service's openapi.json by `npm run generate`): the platform's own events (core.*) exactly, and
// a project's events as an envelope whose `type` and `data` the receiver names for its own types.
import type { webhooks } from './openapi.ts';

type EnvelopeOf<Name extends keyof webhooks> = webhooks[Name]['post'] extends {
  requestBody: { content: { 'application/json': infer Envelope } };
}
  ? Envelope
  : never;

/** An event the platform itself sends (core.endpoint.disabled, core.delivery.dead, …), by its type. */
export type CoreEvent = { [Name in Exclude<keyof webhooks, 'event'>]: EnvelopeOf<Name> }[Exclude<
  keyof webhooks,
  'event'
>];

/** The type names of the platform's own events. */
export type CoreEventType = CoreEvent['type'];

/** An event a product published: name your types, e.g. ProjectEvent<'pay.payment.succeeded', Payment>. */
export interface ProjectEvent<Type extends string = string, Data = Record<string, unknown>> {
  id: string;
  type: Type;
  timestamp: string;
  data: Data;
}

/** What an endpoint receives: the platform's events, and the project's (give your own union to narrow). */
export type PlatformEvent<Project = ProjectEvent> = CoreEvent | Project;
