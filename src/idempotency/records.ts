// One key's record: the final status and body of the request that used it, with its fingerprint. Bodies
// are sealed: a response may carry a secret shown once (a new webhook signing secret), and the database
// holds no secret in clear. The sealing context binds a record to its project and key.
import { type Keyring, seal, unseal } from '../lib/crypto.ts';
import type { Recorded } from './store.ts';

export interface Answer {
  status: number;
  body: unknown;
}

export function recordCodec(keyring: Keyring, projectId: string, key: string) {
  const context = `idempotency:${projectId}:${key}`;
  return {
    seal: (fingerprint: Buffer, answer: Answer): Recorded => ({
      fingerprint,
      status: answer.status,
      sealedBody:
        answer.body === undefined || answer.body === null
          ? null
          : seal(keyring, Buffer.from(JSON.stringify(answer.body)), context),
    }),
    open: (recorded: Recorded): Answer => ({
      status: recorded.status,
      body: recorded.sealedBody ? JSON.parse(unseal(keyring, recorded.sealedBody, context).toString()) : null,
    }),
  };
}

export type RecordCodec = ReturnType<typeof recordCodec>;
