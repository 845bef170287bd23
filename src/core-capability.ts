// Core registers itself like any capability: the event types it emits, the metrics it counts, its eraser.
// Apart from context.ts, so that the CLI's limit commands can register it without building a context.

import { CORE_EVENT_TYPES } from './delivery-store/operational.ts';
import { coreEraser } from './erasure/service.ts';
import { type Capability, CapabilityRegistry } from './registry.ts';

export const CORE_CAPABILITY: Capability = {
  name: 'core',
  eventTypes: CORE_EVENT_TYPES,
  metrics: ['api_requests', 'events_published', 'webhook_deliveries', 'subjects_erased'],
  eraser: coreEraser,
};

/** A registry holding Core alone, as every process starts (the declared capabilities are read into it). */
export function coreRegistry(): CapabilityRegistry {
  const registry = new CapabilityRegistry();
  registry.register(CORE_CAPABILITY);
  return registry;
}
