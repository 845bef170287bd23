/** Every scope a project's key can hold. Routes name the one they need; `--scopes all` grants them all. */
export const SCOPES = [
  'projects:read',
  'subjects:erase',
  'usage:read',
  'webhooks:read',
  'webhooks:write',
  'events:write',
] as const;
export type Scope = (typeof SCOPES)[number];

/** The scopes of operator keys, which belong to no project: the management API (/admin/v1). */
export const OPERATOR_SCOPES = [
  'projects:manage',
  'keys:manage',
  'limits:manage',
  'audit:read',
  'capabilities:manage',
] as const;
export type OperatorScope = (typeof OPERATOR_SCOPES)[number];

/** What every capability's key holds, and only theirs: the capability plane (/capability/v1). */
export const CAPABILITY_SCOPE = 'capability';

/** The kinds of key, by whom they speak for. */
export type KeyKind = 'project' | 'operator' | 'capability';

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);
export const isOperatorScope = (value: string): value is OperatorScope =>
  (OPERATOR_SCOPES as readonly string[]).includes(value);
