// Erasing a person across every capability of a project (docs/capabilities.md). Core's own erasure (and
// that of any capability in this process) commits first, with the erasure's record and a task for each
// capability of its own that asks to be told, the subject sealed in it; then those capabilities are
// asked, and the answer waits up to 10 s for them: 200 when every one answered, else 202 with those still
// pending, which background work keeps asking for up to 7 days (asking.ts). The record keeps a keyed hash
// of the subject, never the subject; the audit log names the erasure, never the person.

import type { Work } from '../audit/work.ts';
import type { Database } from '../db/database.ts';
import { claimFirst } from '../idempotency/write.ts';
import type { Clock } from '../lib/clock.ts';
import { type Keyring, seal } from '../lib/crypto.ts';
import { notFound } from '../lib/errors.ts';
import type { Capability, CapabilityRegistry } from '../registry.ts';
import type { Meter } from '../usage/meter.ts';
import { type ErasureAsking, openSubject, subjectContext } from './asking.ts';
import { erasureStore } from './store.ts';
import { normalizeSubject, type SubjectHasher } from './subject.ts';
import { erasureTasks, type TaskRow } from './tasks.ts';

/** How long an erase waits for the capabilities' answers before it answers 202. */
const WAIT_MS = 10_000;
const POLL_MS = 50;
/** A pushed capability that missed is asked again within the wait, after this, then twice as long each time. */
const RETRY_FIRST_MS = 250;
/** The least time a try within the wait is given. */
const MIN_TRY_MS = 200;
const PULLED_AT_ONCE = 100;

export interface ErasureDeps {
  registry: CapabilityRegistry;
  hashSubject: SubjectHasher;
  clock: Clock;
  meter: Meter;
  /** the erasure commits on its own, before the capabilities are asked */
  db: Database;
  keyring: Keyring;
  erasureAsking: ErasureAsking;
}

type Erased = { capability: string; erased: number }[];

/** The erase's answer: 200 when every capability answered, else 202 with those pending. */
export type EraseAnswer =
  | { status: 200; body: { erasureId: string; capabilities: Erased } }
  | { status: 202; body: { erasureId: string; capabilities: Erased; pending: string[] } };

export const erasureService = ({ db: tx, audit }: Work, deps: ErasureDeps) => {
  const pool = erasureTasks(deps.db);

  /** Core's erasure, the record and the capabilities' tasks, committed together. */
  async function commitErasure(
    projectId: string,
    given: { type: string; value: string },
    keyId: string | null,
    deadline: number,
  ) {
    const subject = normalizeSubject(given);
    const subjectHmac = await deps.hashSubject(subject);
    const now = deps.clock.now();
    const asked = deps.registry
      .list()
      .filter((c): c is Capability & Required<Pick<Capability, 'erasure'>> => Boolean(c.erasure));
    return deps.db.transaction(async (db, hooks) => {
      hooks.onCommit(() => deps.meter.count(projectId, 'core', 'subjects_erased'));
      const inProcess: Erased = [];
      // Core first, as the answer lists it; then any other capability that runs in this process.
      const erasers = deps.registry
        .list()
        .sort((a, b) => Number(b.name === 'core') - Number(a.name === 'core'));
      for (const capability of erasers) {
        if (!capability.eraser) continue;
        const erased = await capability.eraser(db, { projectId, subject, subjectHmac, now });
        inProcess.push({ capability: capability.name, erased });
      }
      const erasureId = await erasureStore(db).record({
        projectId,
        subjectType: subject.type,
        subjectHmac,
        keyId,
        capabilities: inProcess,
        pending: asked.length > 0,
        at: now,
      });
      const text = Buffer.from(JSON.stringify(subject));
      await erasureTasks(db).insert(
        projectId,
        erasureId,
        asked.map((c) => ({
          capability: c.name,
          mode: c.erasure.mode,
          sealedSubject: seal(deps.keyring, text, subjectContext(erasureId, c.name)),
        })),
        new Date(deadline),
      );
      audit.into(hooks)({
        action: 'subject.erased',
        projectId,
        target: { type: 'erasure', id: erasureId },
        fields: ['subject.type'],
      });
      return { erasureId, inProcess };
    });
  }

  /**
   * Pushes until answered (again after each miss, twice as long apart each time) or the deadline. The
   * tries within the wait count as one attempt: the background's back-off starts from its first step.
   */
  async function pushUntil(task: TaskRow, deadline: number): Promise<void> {
    const erasure = deps.registry.get(task.capability)?.erasure;
    const timeoutMs = erasure?.mode === 'push' ? erasure.timeoutSeconds * 1000 : WAIT_MS;
    let why = 'no answer within the wait';
    // No try that would have almost no time: its "no answer" would hide why the earlier ones failed.
    for (let pause = RETRY_FIRST_MS; deadline - Date.now() >= MIN_TRY_MS; pause *= 2) {
      const outcome = await deps.erasureAsking.ask(task, Math.min(timeoutMs, deadline - Date.now()));
      if (typeof outcome !== 'string') return;
      why = outcome;
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(pause, Math.max(0, deadline - Date.now()))),
      );
    }
    await deps.erasureAsking.retryLater(task, why);
  }

  /** Asks the capabilities (pushed ones until they answer), and waits for the rest until the deadline. */
  async function ask(erasureId: string, deadline: number): Promise<TaskRow[]> {
    const created = await pool.of(erasureId);
    await Promise.all(
      created.filter((task) => task.mode === 'push').map((task) => pushUntil(task, deadline)),
    );
    let tasks = await pool.of(erasureId);
    while (tasks.some((t) => t.state === 'pending' && t.mode === 'pull') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      tasks = await pool.of(erasureId);
    }
    await pool.finish([erasureId]);
    return tasks;
  }

  return {
    /**
     * Erases the subject (as given: validated and normalized here) in every capability. The request's
     * idempotency key is claimed first (its transaction's first statement), so a retry with it waits for
     * this answer while the erasure commits on its own and the capabilities are asked.
     */
    async erase(
      projectId: string,
      given: { type: string; value: string },
      keyId: string | null,
    ): Promise<EraseAnswer> {
      await claimFirst(tx);
      const deadline = Date.now() + WAIT_MS;
      const { erasureId, inProcess } = await commitErasure(projectId, given, keyId, deadline);
      const tasks = await ask(erasureId, deadline);
      const capabilities = [
        ...inProcess,
        ...tasks
          .filter((t) => t.state === 'complete')
          .map((t) => ({ capability: t.capability, erased: t.erased ?? 0 })),
      ];
      const pending = tasks.filter((t) => t.state === 'pending').map((t) => t.capability);
      return pending.length === 0
        ? { status: 200, body: { erasureId, capabilities } }
        : { status: 202, body: { erasureId, capabilities, pending } };
    },

    /** A project's erasure, with the state of each capability asked. */
    async get(projectId: string, id: string) {
      const erasure = await erasureStore(tx).find(projectId, id);
      if (!erasure) throw notFound('erasure');
      const tasks = await erasureTasks(tx).of(id);
      const at = erasure.created_at.toISOString();
      return {
        id: erasure.id,
        state: erasure.state,
        capabilities: [
          ...erasure.capabilities.map((c) => ({
            ...c,
            state: 'complete' as const,
            attempts: 1,
            lastError: null,
          })),
          ...tasks.map((t) => ({
            capability: t.capability,
            state: t.state,
            erased: t.erased,
            attempts: t.attempts,
            lastError: t.last_error,
          })),
        ],
        createdAt: at,
        completedAt: erasure.completed_at?.toISOString() ?? null,
      };
    },

    /** A pulling capability's pending tasks, with their subjects, oldest first. */
    async pendingFor(capability: string) {
      const rows = await erasureTasks(tx).pulled(capability, PULLED_AT_ONCE);
      return rows.map((row) => ({
        id: row.erasure_id,
        projectId: row.project_id,
        subject: openSubject(deps.keyring, row),
        createdAt: row.created_at.toISOString(),
      }));
    },

    /** A capability's answer to its task: complete with its count (again: as it is). */
    async complete(capability: string, erasureId: string, erased: number) {
      const tasks = erasureTasks(tx);
      const task = await tasks.find(capability, erasureId);
      if (!task) throw notFound('erasure task');
      if (task.state === 'pending' && (await tasks.complete(erasureId, capability, erased))) {
        await tasks.finish([erasureId]);
        return { id: erasureId, state: 'complete' as const };
      }
      return { id: erasureId, state: task.state };
    },
  };
};

/** Core's own eraser: the events (and, with them, their delivery records) tagged with the subject. */
export const coreEraser: NonNullable<Capability['eraser']> = (tx, request) =>
  erasureStore(tx).redactEvents(request.projectId, request.subjectHmac, request.now);
