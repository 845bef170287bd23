export type { CoreEvent, CoreEventType, PlatformEvent, ProjectEvent } from './events.ts';
export { type HeadersLike, type VerifyOptions, verifyWebhook, WebhookVerificationError } from './verify.ts';
