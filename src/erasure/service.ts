// Erasing a person across every capability of a project, in the caller's transaction: each capability
// that holds data about people runs its eraser (which anonymizes what the law requires to keep), then the
// erasure is recorded with a keyed hash of the subject, never the subject itself, and audited.

import type { Clock } from '../clock.ts';
import type { Capability, CapabilityRegistry } from '../registry.ts';
import type { Meter } from '../usage/meter.ts';
import type { Work } from '../work.ts';
import { erasureStore } from './store.ts';
import { normalizeSubject, type SubjectHasher } from './subject.ts';

export interface SubjectErased {
  capabilities: { capability: string; erased: number }[];
}

export interface ErasureDeps {
  registry: CapabilityRegistry;
  hashSubject: SubjectHasher;
  clock: Clock;
  meter: Meter;
}

export const erasureService = ({ db: tx, hooks, audit }: Work, deps: ErasureDeps) => ({
  /** Erases the subject (as given: it is validated and normalized here) in every capability. */
  /** keyId: the key that asks (null from the CLI). */
  async erase(
    projectId: string,
    given: { type: string; value: string },
    keyId: string | null,
  ): Promise<SubjectErased> {
    const subject = normalizeSubject(given);
    const subjectHmac = await deps.hashSubject(subject);
    const now = deps.clock.now();
    hooks.onCommit(() => deps.meter.count(projectId, 'core', 'subjects_erased'));
    const capabilities: SubjectErased['capabilities'] = [];
    for (const capability of deps.registry.list()) {
      if (!capability.eraser) continue;
      const erased = await capability.eraser(tx, { projectId, subject, subjectHmac, now });
      capabilities.push({ capability: capability.name, erased });
    }
    // The erasure's own record (with the subject's keyed hash), and the audit log's entry.
    const erasureId = await erasureStore(tx).record({
      projectId,
      subjectType: subject.type,
      subjectHmac,
      keyId,
      capabilities,
      at: now,
    });
    audit({
      action: 'subject.erased',
      projectId,
      target: { type: 'erasure', id: erasureId },
      fields: ['subject.type'],
    });
    return { capabilities };
  },
});

/** Core's own eraser: the events (and, with them, their delivery records) tagged with the subject. */
export const coreEraser: NonNullable<Capability['eraser']> = (tx, request) =>
  erasureStore(tx).redactEvents(request.projectId, request.subjectHmac, request.now);
