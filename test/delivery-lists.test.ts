// An endpoint's deliveries as the API lists them, against real receivers on loopback: newest first a page
// at a time, by state and by event type across pages, and each endpoint's attempts of the last 24 hours.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectProblem } from './helpers/app.ts';
import { deliveryHarness } from './helpers/delivery-harness.ts';
import { startReceiver } from './helpers/receiver.ts';

const { service, endpoint, publish, post, get, settled } = await deliveryHarness('dl');

describe('an endpoint’s deliveries, listed', () => {
  test('deliveries of an endpoint, newest first, a page at a time', async () => {
    const tenant = await service.tenant();
    const receiver = await startReceiver();
    const { id } = await endpoint(tenant, receiver.url);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await publish(tenant, 'pay.payment.succeeded')).body.eventId);
    await receiver.waitFor(5);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { data: { eventId: string }[]; nextCursor: string | null } } =
        await get(
          tenant,
          `/core/v1/webhook-endpoints/${id}/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
      assert.equal(page.status, 200);
      assert.ok(page.body.data.length <= 2);
      seen.push(...page.body.data.map((d) => d.eventId));
      cursor = page.body.nextCursor;
    } while (cursor);
    assert.deepEqual(seen, ids.reverse());
    expectProblem(
      await get(tenant, `/core/v1/webhook-endpoints/${id}/deliveries?cursor=garbage`),
      400,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await get(tenant, `/core/v1/webhook-endpoints/${id}/deliveries?limit=0`),
      400,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await get(await service.tenant(), `/core/v1/webhook-endpoints/${id}/deliveries`),
      404,
      'NOT_FOUND',
    );
  });

  test('the list gives each endpoint its attempts of the last 24 hours and how many succeeded', async () => {
    const tenant = await service.tenant();
    const receiver = await startReceiver((_received, index, response) => {
      response.writeHead(index === 0 ? 500 : 204).end();
    });
    const { id } = await endpoint(tenant, receiver.url);
    const quiet = await endpoint(tenant, (await startReceiver()).url, ['pay.nothing.ever']);
    const eventId = (await publish(tenant, 'pay.payment.succeeded')).body.eventId;
    await settled(tenant, eventId, 'delivered');
    const listed = (await get(tenant, '/core/v1/webhook-endpoints')).body.data as {
      id: string;
      last24h: object;
    }[];
    assert.deepEqual(listed.find((e) => e.id === id)?.last24h, { attempts: 2, succeeded: 1 });
    assert.deepEqual(listed.find((e) => e.id === quiet.id)?.last24h, { attempts: 0, succeeded: 0 });
  });

  test('deliveries of an endpoint by state and by event type, across pages', async () => {
    const tenant = await service.tenant();
    const receiver = await startReceiver();
    const { id } = await endpoint(tenant, receiver.url);
    const paid: string[] = [];
    for (let i = 0; i < 3; i++) paid.push((await publish(tenant, 'pay.payment.succeeded')).body.eventId);
    const refunded = (await publish(tenant, 'pay.payment.refunded')).body.eventId;
    await receiver.waitFor(4);
    await post(tenant, `/core/v1/webhook-endpoints/${id}/pause`);
    const held = (await publish(tenant, 'pay.payment.succeeded')).body.eventId;
    const list = async (query: string) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await get(
          tenant,
          `/core/v1/webhook-endpoints/${id}/deliveries?limit=2&${query}${cursor ? `&cursor=${cursor}` : ''}`,
        );
        assert.equal(page.status, 200, page.text);
        seen.push(...page.body.data.map((d: { eventId: string }) => d.eventId));
        cursor = page.body.nextCursor;
      } while (cursor);
      return seen;
    };
    await settled(tenant, paid[2]!, 'delivered');
    assert.deepEqual(await list('eventType=pay.payment.succeeded'), [held, ...[...paid].reverse()]);
    assert.deepEqual(await list('eventType=pay.payment.refunded'), [refunded]);
    assert.deepEqual(await list('state=pending'), [held]);
    assert.deepEqual(await list('state=delivered&eventType=pay.payment.succeeded'), [...paid].reverse());
    for (const query of ['state=lost', 'eventType=Not_A_Type', 'state=pending&state=dead'])
      expectProblem(
        await get(tenant, `/core/v1/webhook-endpoints/${id}/deliveries?${query}`),
        400,
        'VALIDATION_FAILED',
      );
  });
});
