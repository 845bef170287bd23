/** Every scope a key can hold. Routes name the one they need; `--scopes all` grants them all. */
export const SCOPES = [
  'projects:read',
  'subjects:erase',
  'usage:read',
  'webhooks:read',
  'webhooks:write',
  'events:write',
] as const;
export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);
