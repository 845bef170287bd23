// Events: what capabilities and products publish. Every write runs in the caller's transaction, so an
// event exists exactly when the change that caused it commits (and its deliveries with it); the worker is
// woken once it has.

import type { Work } from '../audit/work.ts';
import type { Queued } from '../delivery-store/enqueue.ts';
import { settleLanes } from '../delivery-store/lanes.ts';
import type { DeliveryLog } from '../delivery-store/log.ts';
import { TEST_EVENT_TYPE } from '../delivery-store/operational.ts';
import { normalizeSubject, type SubjectHasher } from '../erasure/subject.ts';
import { write } from '../idempotency/write.ts';
import type { Clock } from '../lib/clock.ts';
import { notFound, PlatformError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { repeatedName } from '../lib/json-text.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { projectStore } from '../projects/store.ts';
import type { Subject } from '../registry.ts';
import type { UsageLimits } from '../usage/limits.ts';
import type { Meter } from '../usage/meter.ts';
import type { DeliveryForecast } from './forecast.ts';
import { eventStore } from './store.ts';

/** The most a published event's `data` may weigh, as JSON. */
export const MAX_EVENT_DATA_BYTES = 256 * 1024;

export interface NewEvent {
  projectId: string;
  type: string;
  /** the data as JSON text, stored and delivered as it is */
  data: string;
  /** The people the event concerns (normalized), so that their erasure can redact it. */
  subjects?: Subject[];
  /** endpoints ordered by key deliver the events of one key in publish order */
  orderingKey?: string;
}

/** An event as a product publishes it over the API. */
export interface Publication {
  type: string;
  /** the data as the publisher wrote it (compact JSON text: json-text.ts), never re-serialised */
  data: string;
  subjects?: { type: string; value: string }[];
  orderingKey?: string;
}

export interface EventDeps {
  hashSubject: SubjectHasher;
  limits: UsageLimits;
  meter: Meter;
  metrics: Pick<Metrics, 'published'>;
  /**
   * checks an event's data against its type's schema as last read, or as it is now when `fresh`; the
   * version of the project's type it read, null when undeclared (catalogue/service.ts)
   */
  checkData: (projectId: string, type: string, data: string, fresh: boolean) => Promise<number | null>;
  /** the time events take (their ids carry it) */
  clock: Clock;
  /** the installation's retention of history, in days (a project may keep fewer) */
  retentionDays: number;
  /** wakes the delivery workers, in this process and others, once the write has committed (delivery-store/wake.ts) */
  wake: () => void;
  /** how many deliveries the last publish of each kind queued */
  forecast: DeliveryForecast;
  /** the deliveries an event read shows */
  log: Pick<DeliveryLog, 'ofEvent'>;
  /** the example of a type of the catalogue; undefined when there is no such type */
  exampleOf: (projectId: string, type: string) => Promise<object | null | undefined>;
  /** the event types a capability declares, as they are now when one asked for is not among those last read */
  typesOf: (capability: string, wanted: string) => Promise<string[]>;
}

export const eventService = ({ db: tx, hooks }: Work, deps: EventDeps) => {
  const store = eventStore(tx);
  /** The example a type of the catalogue gives, or a 400 naming /eventType. */
  const exampleOf = async (projectId: string, type: string) => {
    const example = await deps.exampleOf(projectId, type);
    if (example) return example;
    const detail =
      example === undefined
        ? `no event type ${type} in the catalogue`
        : `${type} has no example (PUT /core/v1/event-types/${type} declares one)`;
    throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer: '/eventType', detail }] });
  };
  /**
   * After a write that queued deliveries: the ordered lanes they joined are settled, and the workers are
   * woken once it commits.
   */
  const settle = async (projectId: string, { deliveries, lanes }: Queued) => {
    await settleLanes(tx, projectId, lanes);
    if (deliveries > 0) hooks.onCommit(deps.wake);
    return deliveries;
  };

  /** The event as the outbox writes it: an id that carries this moment, its subjects' tags. */
  const rowOf = async (event: NewEvent) => ({
    id: newId(deps.clock.now()),
    projectId: event.projectId,
    type: event.type,
    data: event.data,
    subjectHmacs: await Promise.all((event.subjects ?? []).map(deps.hashSubject)),
    orderingKey: event.orderingKey,
  });

  const service = {
    /** The event and its deliveries, statement by statement; what it queued teaches the forecast. */
    async emit(event: NewEvent): Promise<{ eventId: string; deliveries: number }> {
      const { projectId, type, orderingKey } = event;
      const row = await rowOf(event);
      const queued = await store.insert(row);
      deps.forecast.learn(projectId, type, orderingKey, queued);
      return { eventId: row.id, deliveries: await settle(projectId, queued) };
    },

    /**
     * A product's event: its type outside the platform's reserved `core.` namespace, its data within the
     * size limit and its subjects valid, and within the project's daily limit of published events.
     */
    async publish(projectId: string, publication: Publication) {
      if (publication.type.startsWith('core.')) {
        throw new PlatformError(
          'VALIDATION_FAILED',
          'event types under core. are reserved for the platform',
          {
            errors: [{ pointer: '/type', detail: 'the core. namespace is reserved' }],
          },
        );
      }
      if (Buffer.byteLength(publication.data) > MAX_EVENT_DATA_BYTES) {
        throw new PlatformError('PAYLOAD_TOO_LARGE', 'the event data is over 256 KiB');
      }
      const repeated = repeatedName(publication.data);
      if (repeated !== null) {
        // Delivered as written, the data must mean one thing to every receiver's parser.
        const detail = 'a member name appears twice in one object';
        throw new PlatformError('VALIDATION_FAILED', detail, {
          errors: [{ pointer: `/data${repeated}`, detail }],
        });
      }
      const subjects = (publication.subjects ?? []).map((subject) => normalizeSubject(subject));
      const { type, data, orderingKey } = publication;
      const event = { projectId, type, data, subjects, orderingKey };
      // Predicted (its deliveries by the last publish of its kind), it goes as one statement, its data
      // checked against the schema as last read, which that statement checks is still the type's.
      const deliveries = deps.forecast.of(projectId, type, orderingKey);
      const version = await deps.checkData(projectId, type, data, deliveries === undefined);
      // Taken before the first statement (no connection is held yet); given back if nothing commits.
      const giveBack = await deps.limits.take(projectId, 'core', 'events_published');
      hooks.onRollback(giveBack);
      hooks.onCommit(() => {
        deps.meter.count(projectId, 'core', 'events_published');
        deps.metrics.published.inc();
      });
      const row = deliveries === undefined ? undefined : await rowOf(event);
      const predicted = row && {
        statement: store.insertSole(row, deliveries ?? 0, version),
        answer: { eventId: row.id, deliveries: deliveries ?? 0 },
      };
      const published = await write(hooks, predicted, async () => {
        // The type may have a new schema since the reading the prediction trusted: checked as it is now.
        if (predicted) await deps.checkData(projectId, type, data, true);
        return service.emit(event);
      });
      // The ordinary way wakes the workers itself (emit); the one statement's answer is the predicted one.
      if (published === predicted?.answer && published.deliveries > 0) hooks.onCommit(deps.wake);
      return published;
    },

    /** An event within its project's retention: its head, its data as published (JSON text), its deliveries. */
    async read(projectId: string, eventId: string) {
      const event = await store.find(projectId, eventId, deps.retentionDays);
      if (!event) throw notFound('event');
      const head = {
        id: event.id,
        type: event.type,
        createdAt: event.created_at.toISOString(),
        redacted: event.redacted_at !== null,
      };
      return {
        head,
        data: event.data,
        deliveries: await deps.log.ofEvent(projectId, event.id, event.created_at),
      };
    },

    /**
     * A capability's event on a project's behalf: one of the types it declares, to a project that exists;
     * then as the project's own publish (its limit, its schema, its idempotency recorded with it).
     */
    async publishFor(capability: string, projectId: string, publication: Publication) {
      if (!(await deps.typesOf(capability, publication.type)).includes(publication.type)) {
        const detail = `${capability} declares no event type ${publication.type}`;
        throw new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer: '/type', detail }] });
      }
      if (!(await projectStore(tx).find({ id: projectId }))) throw notFound('project');
      return service.publish(projectId, publication);
    },

    /** Same eventId, new deliveries to the endpoints subscribed now, signed afresh when sent. */
    async replay(projectId: string, eventId: string) {
      const state = await store.dispatchState(projectId, eventId, deps.retentionDays);
      if (!state) throw notFound('event');
      if (state.in_progress) {
        throw new PlatformError(
          'EVENT_DISPATCH_IN_PROGRESS',
          'the event is still being dispatched for the first time; replay it once every first attempt is made',
        );
      }
      const event = {
        id: eventId,
        type: state.type,
        createdAt: state.created_at,
        orderingKey: state.ordering_key,
      };
      return { eventId, deliveries: await settle(projectId, await store.replay(projectId, event)) };
    },

    /**
     * A signed test event to this endpoint only, whatever its eventTypes: core.webhook.test, or an event of
     * a type of the catalogue with its example as data. A sole write, unless the endpoint is missing (404)
     * or ordered (its lane is settled by a second statement).
     */
    async sendTest(projectId: string, endpointId: string, eventType?: string) {
      const eventId = newId(deps.clock.now());
      const test = eventType
        ? { type: eventType, data: await exampleOf(projectId, eventType) }
        : {
            type: TEST_EVENT_TYPE,
            data: {
              message: 'A test event from platform-core: your endpoint receives and can verify webhooks.',
              endpointId,
            },
          };
      const answer = { eventId, endpointId };
      hooks.onCommit(deps.wake);
      const statement = store.insertTestSole(projectId, endpointId, eventId, test);
      return write(hooks, { statement, answer }, async () => {
        const queued = await store.insertTest(projectId, endpointId, eventId, test);
        if (queued.deliveries === 0) throw notFound('webhook endpoint');
        await settleLanes(tx, projectId, queued.lanes);
        return answer;
      });
    },
  };
  return service;
};
