export {
  type BreakerLike,
  BreakerReporter,
  type BreakerReporterOptions,
  type BreakerState,
} from './breakers.ts';
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
export {
  expressGateway,
  fastifyGateway,
  type GatewayCaller,
  type GatewayRequest,
  GatewayVerificationError,
  type GatewayVerifyOptions,
  verifyGatewayRequest,
} from './gateway.ts';
export type { components, paths } from './openapi.ts';
export { type RecorderOptions, type UsageInput, type UsageRecord, UsageRecorder } from './recorder.ts';
