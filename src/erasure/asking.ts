// Asking capabilities to erase a subject (docs/capabilities.md). Push: a POST to the capability's erasure
// URL, signed as webhooks are (Standard Webhooks headers, the capability's signing secrets), body
// {erasureId, projectId, subject}; only `200 {erased}` with a whole erased ≥ 0 counts as an answer.
// Otherwise the task stays pending and is asked again with back-off until the window (7 days) ends; then
// it fails and core.erasure.failed goes to the project's endpoints that take it. Pull: the capability
// reads its tasks and completes them (capability routes). A capability no longer asked is skipped.
import type { Logger } from 'pino';
import { request } from 'undici';
import type { Database } from '../db/database.ts';
import { emitOperational } from '../delivery-store/operational.ts';
import { type Keyring, unseal } from '../lib/crypto.ts';
import { signatureHeader } from '../lib/signature.ts';
import type { CapabilitySigning } from '../plane/capabilities/signing.ts';
import type { CapabilityRegistry, Subject } from '../registry.ts';
import { erasureTasks, type TaskRow } from './tasks.ts';

/** Pushed tasks taken at a time, and how long one is held by the worker that took it. */
const BATCH = 50;
const LEASE_SECONDS = 60;
const MAX_BACKOFF_SECONDS = 3600;

export interface AskingDeps {
  db: Database;
  keyring: Keyring;
  registry: CapabilityRegistry;
  signing: CapabilitySigning;
  log: Logger;
  /** how long a capability has to answer before its task fails (7 days), and the first retry's delay */
  erasure: { windowSeconds: number; retrySeconds: number };
}

/** The subject sealed for its task: bound to the erasure and the capability, opened only for it. */
export const subjectContext = (erasureId: string, capability: string) =>
  `erasure-subject:${erasureId}:${capability}`;

export function openSubject(keyring: Keyring, task: TaskRow): Subject {
  const sealed = task.sealed_subject as Buffer;
  return JSON.parse(unseal(keyring, sealed, subjectContext(task.erasure_id, task.capability)).toString());
}

/** The count in a capability's answer, or why it is not an answer. */
export function erasedIn(status: number, text: string): number | string {
  if (status !== 200) return `HTTP ${status}`;
  try {
    const erased = (JSON.parse(text) as { erased?: unknown }).erased;
    if (Number.isSafeInteger(erased) && (erased as number) >= 0) return erased as number;
  } catch {}
  return 'the answer is not {"erased": a whole number ≥ 0}';
}

export function erasureAsking(deps: AskingDeps) {
  const tasks = erasureTasks(deps.db);

  /** Asks once: a count settles the task (true if it was pending); otherwise why it is not an answer. */
  async function ask(task: TaskRow, timeoutMs: number): Promise<boolean | string> {
    const capability = deps.registry.get(task.capability);
    const url = capability?.erasure?.mode === 'push' ? capability.erasure.url : undefined;
    const outcome = url ? await send(task, url, timeoutMs) : 'the capability no longer asks to be pushed';
    return typeof outcome === 'number' ? tasks.complete(task.erasure_id, task.capability, outcome) : outcome;
  }

  /** A miss: one attempt more, asked again after a back-off that doubles with each attempt (≤ 1 h). */
  async function retryLater(task: TaskRow, why: string) {
    const backoff = Math.min(MAX_BACKOFF_SECONDS, deps.erasure.retrySeconds * 2 ** task.attempts);
    await tasks.missed(task.erasure_id, task.capability, why, new Date(Date.now() + backoff * 1000));
  }

  /** Pushes one task; settles it (true) or schedules its next try (false). */
  async function push(task: TaskRow, timeoutMs: number): Promise<boolean> {
    const outcome = await ask(task, timeoutMs);
    if (typeof outcome !== 'string') return outcome;
    await retryLater(task, outcome);
    return false;
  }

  async function send(task: TaskRow, url: string, timeoutMs: number): Promise<number | string> {
    const subject = openSubject(deps.keyring, task);
    const body = JSON.stringify({ erasureId: task.erasure_id, projectId: task.project_id, subject });
    const id = `erasure_${task.erasure_id}`;
    const timestamp = Math.floor(Date.now() / 1000);
    try {
      const keys = await deps.signing.keysOf(task.capability);
      const answer = await request(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(keys, id, timestamp, body),
        },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = (await answer.body.text()).slice(0, 10_000);
      return erasedIn(answer.statusCode, text);
    } catch (error) {
      return error instanceof Error && error.name === 'TimeoutError'
        ? `no answer within ${timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 1000)} s`}`
        : `no answer: ${(error as Error).message}`;
    }
  }

  return {
    ask,
    retryLater,

    /**
     * One round of the background work: pushed tasks due again, tasks past the window failed (and told
     * to the project's endpoints), tasks of capabilities no longer asked skipped, erasures ended.
     */
    async round(): Promise<number> {
      const asked = deps.registry
        .list()
        .filter((c) => c.erasure)
        .map((c) => c.name);
      const skipped = await tasks.skipAllBut(asked);
      const failed = await deps.db.transaction(async (tx) => {
        const rows = await erasureTasks(tx).fail(deps.erasure.windowSeconds);
        await emitOperational(
          tx,
          rows.map((row) => ({
            projectId: row.project_id,
            type: 'core.erasure.failed' as const,
            data: {
              erasureId: row.erasure_id,
              capability: row.capability,
              attempts: row.attempts,
              lastError: row.last_error,
            },
          })),
        );
        return rows;
      });
      const due = await tasks.due(BATCH, LEASE_SECONDS);
      await Promise.all(
        due.map((task) => {
          const capability = deps.registry.get(task.capability);
          const seconds = capability?.erasure?.mode === 'push' ? capability.erasure.timeoutSeconds : 10;
          return push(task, seconds * 1000).catch((error) =>
            deps.log.warn({ err: error, capability: task.capability }, 'asking a capability to erase failed'),
          );
        }),
      );
      const ended = await tasks.finish();
      return skipped.length + failed.length + due.length + ended;
    },
  };
}

export type ErasureAsking = ReturnType<typeof erasureAsking>;
