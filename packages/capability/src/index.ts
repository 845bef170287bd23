export {
  Capability,
  type CapabilityOptions,
  type CapabilityRecord,
  type LimitToday,
  type Manifest,
  type Reservation,
  type Verified,
} from './capability.ts';
export { type ErrorCode, PlatformError } from './errors.ts';
export type { components, paths } from './openapi.ts';
export { type RecorderOptions, type UsageInput, type UsageRecord, UsageRecorder } from './recorder.ts';
