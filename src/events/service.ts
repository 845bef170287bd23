// Events: what capabilities publish. `emit` runs in the caller's transaction, so an event exists exactly
// when the change that caused it commits (and its deliveries with it).
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/database.ts';
import type { Subject, SubjectHasher } from '../erasure/subject.ts';
import { notFound, PlatformError } from '../errors.ts';
import { eventStore } from './store.ts';

export interface NewEvent {
  projectId: string;
  type: string;
  data: Record<string, unknown>;
  /** The people the event concerns (normalized), so that their erasure can redact it. */
  subjects?: Subject[];
}

export const eventService = (tx: Db, deps: { hashSubject: SubjectHasher }) => {
  const store = eventStore(tx);
  return {
    async emit(event: NewEvent): Promise<{ eventId: string; deliveries: number }> {
      const id = randomUUID();
      const subjectHmacs = await Promise.all((event.subjects ?? []).map(deps.hashSubject));
      const deliveries = await store.insert({
        id,
        projectId: event.projectId,
        type: event.type,
        data: event.data,
        subjectHmacs,
      });
      return { eventId: id, deliveries };
    },

    /** Same eventId, new deliveries to the endpoints subscribed now, signed afresh when sent. */
    async replay(projectId: string, eventId: string) {
      const state = await store.dispatchState(projectId, eventId);
      if (!state) throw notFound('event');
      if (state.in_progress) {
        throw new PlatformError(
          'EVENT_DISPATCH_IN_PROGRESS',
          'the event is still being dispatched for the first time; replay it once every first attempt is made',
        );
      }
      return { eventId, deliveries: await store.replay(projectId, eventId, state.type) };
    },

    /** A signed core.webhook.test event to this endpoint only, whatever its eventTypes. */
    async sendTest(projectId: string, endpointId: string) {
      const eventId = randomUUID();
      const data = {
        message: 'A test event from platform-core: your endpoint receives and can verify webhooks.',
        endpointId,
      };
      if (!(await store.insertTest(projectId, endpointId, eventId, data))) throw notFound('webhook endpoint');
      return { eventId, endpointId };
    },
  };
};
