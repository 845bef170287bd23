export { type LimitName, PlatformAdminClient } from './admin.ts';
export { PlatformClient } from './client.ts';
export { type ErrorCode, type FieldError, PlatformError } from './errors.ts';
export type { components, operations, paths } from './openapi.ts';
export type { Body, CallOptions, ClientOptions, Query, Result } from './transport.ts';
