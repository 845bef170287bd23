// Erasing a person across every capability of a project, in the caller's transaction: each capability
// that holds data about people runs its eraser (which anonymizes what the law requires to keep), then the
// erasure is audited with a keyed hash of the subject, never the subject itself.
import type { Capability, CapabilityRegistry } from '../capabilities.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/database.ts';
import type { Principal } from '../keys/service.ts';
import type { Meter } from '../usage/meter.ts';
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
  /** runs a callback once the caller's transaction commits */
  onCommit: (callback: () => void) => void;
}

export const erasureService = (tx: Db, deps: ErasureDeps) => ({
  /** Erases the subject (as given: it is validated and normalized here) in every capability. */
  async erase(principal: Principal, given: { type: string; value: string }): Promise<SubjectErased> {
    const subject = normalizeSubject(given);
    const subjectHmac = await deps.hashSubject(subject);
    const projectId = principal.project.id;
    const now = deps.clock.now();
    deps.onCommit(() => deps.meter.count(projectId, 'core', 'subjects_erased'));
    const capabilities: SubjectErased['capabilities'] = [];
    for (const capability of deps.registry.list()) {
      if (!capability.eraser) continue;
      const erased = await capability.eraser(tx, { projectId, subject, subjectHmac, now });
      capabilities.push({ capability: capability.name, erased });
    }
    await erasureStore(tx).audit({
      projectId,
      subjectType: subject.type,
      subjectHmac,
      keyId: principal.keyId,
      capabilities,
      at: now,
    });
    return { capabilities };
  },
});

/** Core's own eraser: the events (and, with them, their delivery records) tagged with the subject. */
export const coreEraser: NonNullable<Capability['eraser']> = (tx, request) =>
  erasureStore(tx).redactEvents(request.projectId, request.subjectHmac, request.now);
