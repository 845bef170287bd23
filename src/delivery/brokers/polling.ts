// Polling destinations: a delivery is delivered once appended to the destination's feed, which its consumer
// reads from a cursor it keeps (GET /core/v1/destinations/{id}/messages). Nothing is dialled.
import type { Database } from '../../db/database.ts';
import { feedStore } from '../../delivery-store/feed.ts';
import type { Destination } from '../destination.ts';
import { acknowledged, timed } from './outcome.ts';

export function pollingDestination(options: { db: Database; timeoutMs: number }): Destination {
  const feed = feedStore(options.db);
  return {
    send: (outgoing) =>
      timed(options.timeoutMs, 'the feed did not take it in time', async (started) => {
        const seq = await feed.append({
          projectId: outgoing.projectId,
          endpointId: outgoing.endpointId,
          eventId: outgoing.headers['webhook-id'],
          eventType: outgoing.eventType,
          eventCreatedAt: outgoing.eventCreatedAt,
          payload: outgoing.body.toString(),
        });
        return acknowledged(`appended to the feed (#${seq})`, Math.round(performance.now() - started));
      }),
    close: async () => {},
  };
}
