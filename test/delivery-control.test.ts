// Steering delivery through HTTP, with real receivers on loopback: one endpoint read and changed, pause
// and resume, cancelling what waits, retrying one delivery, recovering in bulk, and the operational
// events that tell an endpoint's owner what happened.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { client } from './helpers/api.ts';
import { expectProblem, startService } from './helpers/app.ts';
import { answerWith, eventually, startReceiver } from './helpers/receiver.ts';

const service = await startService({
  env: {
    PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
    PLATFORM_RETRY_SCHEDULE: '1',
    PLATFORM_DELIVERY_TIMEOUT_MS: '1000',
    PLATFORM_WORKER_POLL_MS: '100',
    PLATFORM_DISABLE_AFTER_DEAD: '6',
  },
  worker: true,
});

/** The types of the events a receiver got, in arrival order. */
const typesOf = (receiver: Awaited<ReturnType<typeof startReceiver>>) =>
  receiver.received.map((r) => JSON.parse(r.body.toString()).type as string);
const dataOf = (receiver: Awaited<ReturnType<typeof startReceiver>>) =>
  receiver.received.map((r) => JSON.parse(r.body.toString()).data);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('delivery control', () => {
  test('GET one endpoint → 200 with its state; PATCH changes it (merge patch), checking the address', async () => {
    const api = client(service, await service.tenant());
    const { id, secret } = await api.endpoint('https://hooks.example.com/a', ['pay.*']);
    const got = await api.get(`/core/v1/webhook-endpoints/${id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(
      { ...got.body, createdAt: undefined },
      {
        id,
        url: 'https://hooks.example.com/a',
        eventTypes: ['pay.*'],
        active: true,
        paused: false,
        rateLimitPerSecond: null,
        ordering: 'none',
        waiting: 0,
        hasPreviousSecret: false,
        name: null,
        description: null,
        metadata: {},
        headers: {},
        filter: null,
        auth: null,
        tls: null,
        createdAt: undefined,
      },
    );
    const patched = await api.call(
      'PATCH',
      `/core/v1/webhook-endpoints/${id}`,
      { url: 'https://hooks.example.com/b', rateLimitPerSecond: 20, ordering: 'key' },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.url, 'https://hooks.example.com/b');
    assert.equal(patched.body.rateLimitPerSecond, 20);
    assert.equal(patched.body.ordering, 'key');
    assert.deepEqual(patched.body.eventTypes, ['pay.*'], 'what the patch leaves out stays');
    const cleared = await api.call('PATCH', `/core/v1/webhook-endpoints/${id}`, { rateLimitPerSecond: null });
    assert.equal(cleared.body.rateLimitPerSecond, null);
    const patch = (body: unknown) => api.call('PATCH', `/core/v1/webhook-endpoints/${id}`, body);
    expectProblem(await patch({ rateLimitPerSecond: 0 }), 400, 'VALIDATION_FAILED');
    expectProblem(await patch({ rateLimitPerSecond: 10_001 }), 400, 'VALIDATION_FAILED');
    expectProblem(await patch({ ordering: 'global' }), 400, 'VALIDATION_FAILED');
    expectProblem(await patch({ secret: 'whsec_x' }), 400, 'VALIDATION_FAILED');
    expectProblem(await patch({ paused: true }), 400, 'VALIDATION_FAILED');
    // A patch that changes nothing, and one that sets a field to the value it has: no audit entry.
    assert.equal((await patch({})).status, 200);
    assert.equal((await patch({ url: 'https://hooks.example.com/b', ordering: 'key' })).status, 200);
    const audit = await service.db.query(
      `select fields from audit_log where action = 'endpoint.updated' and target_id = $1 order by at`,
      [id],
    );
    assert.deepEqual(
      audit.rows.map((r) => r.fields),
      [['url', 'rateLimitPerSecond', 'ordering'], ['rateLimitPerSecond']],
    );
    assert.ok(secret.startsWith('whsec_'));
  });

  test('pause: deliveries are created and held, visible, nothing sent; resume: all go out, oldest first', async () => {
    const api = client(service, await service.tenant());
    const receiver = await startReceiver();
    const { id } = await api.endpoint(receiver.url, ['pay.*'], { ordering: 'endpoint' });
    const paused = await api.post(`/core/v1/webhook-endpoints/${id}/pause`);
    assert.equal(paused.status, 200);
    assert.equal(paused.body.paused, true);
    assert.equal((await api.post(`/core/v1/webhook-endpoints/${id}/pause`)).body.paused, true, 'again: same');
    const events: string[] = [];
    for (let i = 0; i < 5; i++) events.push(await api.publish('pay.thing.happened', { i }));
    await pause(600);
    assert.equal(receiver.received.length, 0, 'nothing is sent while paused');
    const history = await api.history(id);
    assert.equal(history.length, 5);
    assert.ok(history.every((d) => d.state === 'pending'));
    assert.deepEqual(
      history.map((d) => d.waitReason).sort(),
      ['ordered', 'ordered', 'ordered', 'ordered', 'paused'],
      'the head waits for the pause, the rest for the head',
    );
    const event = await api.get(`/core/v1/events/${events[0]}`);
    assert.equal(event.body.deliveries[0].waitReason, 'paused');
    const record = await api.get(`/core/v1/webhook-endpoints/${id}`);
    assert.equal(record.body.waiting, 5);
    const health = await api.get('/api/health');
    assert.deepEqual(
      health.body.endpoints.find((e: { id: string }) => e.id === id),
      { id, state: 'paused', waiting: 5 },
    );

    const resumed = await api.post(`/core/v1/webhook-endpoints/${id}/resume`);
    assert.equal(resumed.body.paused, false);
    await receiver.waitFor(5);
    assert.deepEqual(
      dataOf(receiver).map((d) => d.i),
      [0, 1, 2, 3, 4],
    );
    await eventually(async () => (await api.get(`/core/v1/webhook-endpoints/${id}`)).body.waiting === 0);
  });

  test('pause on an unordered endpoint holds its queue; what a worker holds is let go of; resume sends all', async () => {
    const api = client(service, await service.tenant());
    const receiver = await startReceiver(answerWith(204));
    const { id } = await api.endpoint(receiver.url, ['pay.*']);
    await api.post(`/core/v1/webhook-endpoints/${id}/pause`);
    for (let i = 0; i < 20; i++) await api.publish('pay.thing.happened', { i });
    await pause(500);
    assert.equal(receiver.received.length, 0);
    await api.post(`/core/v1/webhook-endpoints/${id}/resume`);
    await receiver.waitFor(20);
    assert.deepEqual(
      dataOf(receiver)
        .map((d) => d.i)
        .sort((a, b) => a - b),
      [...Array(20).keys()],
    );
  });

  test('cancel-pending → 200 {cancelled}; their history stays; the endpoint keeps receiving new events', async () => {
    const api = client(service, await service.tenant());
    const receiver = await startReceiver();
    const { id } = await api.endpoint(receiver.url, ['pay.*']);
    await api.post(`/core/v1/webhook-endpoints/${id}/pause`);
    for (let i = 0; i < 3; i++) await api.publish('pay.thing.happened', { i });
    const cancelled = await api.post(`/core/v1/webhook-endpoints/${id}/cancel-pending`);
    assert.equal(cancelled.status, 200);
    assert.deepEqual(cancelled.body, { cancelled: 3 });
    assert.deepEqual(
      (await api.post(`/core/v1/webhook-endpoints/${id}/cancel-pending`)).body,
      { cancelled: 0 },
      'again: nothing left',
    );
    const history = await api.history(id);
    assert.deepEqual(
      history.map((d) => d.state),
      ['cancelled', 'cancelled', 'cancelled'],
    );
    await api.post(`/core/v1/webhook-endpoints/${id}/resume`);
    await api.publish('pay.thing.happened', { i: 3 });
    await receiver.waitFor(1);
    await pause(300);
    assert.deepEqual(
      dataOf(receiver).map((d) => d.i),
      [3],
    );
  });

  test('retry: a dead delivery is sent again now (202); a delivered one → 400 DELIVERY_NOT_RETRYABLE', async () => {
    const api = client(service, await service.tenant());
    const receiver = await startReceiver(answerWith(500));
    const { id } = await api.endpoint(receiver.url, ['pay.*']);
    const eventId = await api.publish('pay.thing.happened', { i: 1 });
    const dead = await eventually(async () => {
      const delivery = (await api.get(`/core/v1/events/${eventId}`)).body.deliveries[0];
      return delivery?.state === 'dead' && delivery;
    });
    receiver.answer(answerWith(200));
    const retried = await api.post(`/core/v1/deliveries/${dead.id}/retry`);
    assert.equal(retried.status, 202, retried.text);
    assert.deepEqual(retried.body, { deliveryId: dead.id });
    const delivered = await eventually(async () => {
      const delivery = (await api.get(`/core/v1/events/${eventId}`)).body.deliveries[0];
      return delivery?.state === 'delivered' && delivery;
    });
    assert.equal(delivered.id, dead.id, 'the same delivery, one more attempt');
    assert.equal(delivered.attemptCount, 3);
    expectProblem(await api.post(`/core/v1/deliveries/${dead.id}/retry`), 400, 'DELIVERY_NOT_RETRYABLE');
    expectProblem(
      await api.post('/core/v1/deliveries/0193b0a4-1e0b-7a2b-8c3d-4e5f6a7b8c9d/retry'),
      404,
      'NOT_FOUND',
    );
    assert.ok(id);
  });

  test('recover: a dry run counts (200, nothing created); a run re-sends in a job (202), filtered by state, type and time', async () => {
    const api = client(service, await service.tenant());
    const receiver = await startReceiver(answerWith(500));
    const { id } = await api.endpoint(receiver.url, ['pay.*', 'billing.*']);
    const before = new Date().toISOString();
    const failing: string[] = [];
    for (let i = 0; i < 4; i++) failing.push(await api.publish('pay.thing.happened', { i }));
    failing.push(await api.publish('billing.invoice.paid', { i: 4 }));
    await eventually(
      async () => (await api.history(id)).filter((d) => d.state === 'dead').length === 5,
      20_000,
      'five dead deliveries',
    );
    receiver.answer(answerWith(204));
    const delivered = await api.publish('pay.thing.happened', { i: 5 });
    await eventually(async () =>
      (await api.history(id)).some((d) => d.eventId === delivered && d.state === 'delivered'),
    );
    const recover = (body: Record<string, unknown>) =>
      api.post(`/core/v1/webhook-endpoints/${id}/recover`, { since: before, ...body });

    const dry = await recover({ states: ['dead'], dryRun: true });
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual(dry.body, { matched: 5 });
    assert.deepEqual((await recover({ states: ['dead'], eventTypes: ['pay.*'], dryRun: true })).body, {
      matched: 4,
    });
    assert.deepEqual((await recover({ states: ['delivered'], dryRun: true })).body, { matched: 1 });
    const hourBefore = new Date(Date.parse(before) - 3600_000).toISOString();
    const earlier = await recover({ states: ['dead'], since: hourBefore, until: before, dryRun: true });
    assert.deepEqual(earlier.body, { matched: 0 });
    expectProblem(
      await recover({ states: ['dead'], until: '2020-01-01T00:00:00Z' }),
      400,
      'VALIDATION_FAILED',
    );
    expectProblem(await recover({ states: ['pending'] }), 400, 'VALIDATION_FAILED');
    expectProblem(await recover({ states: [] }), 400, 'VALIDATION_FAILED');
    assert.equal(receiver.received.length, 5 * 2 + 1, 'a dry run sends nothing');

    const run = await recover({ states: ['dead'], eventTypes: ['pay.thing.happened'] });
    assert.equal(run.status, 202, run.text);
    assert.equal(run.body.matched, 4);
    const job = await eventually(async () => {
      const found = await api.get(`/core/v1/jobs/${run.body.jobId}`);
      return found.body.state === 'done' && found.body;
    });
    assert.equal(job.kind, 'recover');
    assert.equal(job.total, 4);
    assert.equal(job.done, 4);
    assert.ok(job.finishedAt);
    await receiver.waitFor(11 + 4);
    const recovered = dataOf(receiver)
      .slice(11)
      .map((d) => d.i)
      .sort();
    assert.deepEqual(recovered, [0, 1, 2, 3]);
    const history = await api.history(id);
    assert.equal(history.filter((d) => (d as unknown as { kind: string }).kind === 'replay').length, 4);
    // Their latest deliveries are delivered now: nothing dead is left to recover of them.
    await eventually(async () => {
      const again = await recover({ states: ['dead'], eventTypes: ['pay.*'], dryRun: true });
      return again.body.matched === 0;
    });
    expectProblem(await api.get('/core/v1/jobs/0193b0a4-1e0b-7a2b-8c3d-4e5f6a7b8c9d'), 404, 'NOT_FOUND');
  });

  test('recover refuses more than 100,000 events (400) and a disabled endpoint (400 WEBHOOK_ENDPOINT_DISABLED)', async () => {
    const tenant = await service.tenant();
    const api = client(service, tenant);
    const { id } = await api.endpoint('https://hooks.example.com/many', ['pay.*']);
    await api.call('PATCH', `/core/v1/webhook-endpoints/${id}`, { active: false });
    // 100,001 dead deliveries of as many events, written directly (the API would take minutes).
    await service.db.query(
      `with e as (
         insert into events (project_id, id, type, data, created_at)
         select $1, uuid_v7_at(now() - interval '1 hour'), 'pay.old.thing', '{}', now() - interval '1 hour'
           from generate_series(1, 100001)
         returning id, created_at
       )
       insert into deliveries (project_id, id, event_id, event_created_at, endpoint_id, kind, state, created_at, dead_at)
       select $1, uuid_v7_at(created_at), id, created_at, $2, 'dispatch', 'dead', now(), now() from e`,
      [tenant.projectId, id],
    );
    const since = new Date(Date.now() - 2 * 3600_000).toISOString();
    const body = { states: ['dead'], since };
    const dry = await api.post(`/core/v1/webhook-endpoints/${id}/recover`, { ...body, dryRun: true });
    expectProblem(dry, 400, 'VALIDATION_FAILED');
    assert.match(dry.body.detail, /100001 events match/);
    expectProblem(
      await api.post(`/core/v1/webhook-endpoints/${id}/recover`, { ...body, eventTypes: ['pay.other.*'] }),
      400,
      'WEBHOOK_ENDPOINT_DISABLED',
    );
    const { rows } = await service.db.query('select count(*)::int as n from jobs where project_id = $1', [
      tenant.projectId,
    ]);
    assert.equal(rows[0]?.n, 0, 'no job was made');
  });

  test('operational events: paused, resumed, a dead delivery, and an endpoint disabled by dead deliveries in a row', async () => {
    const api = client(service, await service.tenant());
    const watcher = await startReceiver();
    const failing = await startReceiver(answerWith(500));
    await api.endpoint(watcher.url, ['core.*']);
    const { id } = await api.endpoint(failing.url, ['pay.*']);
    await api.post(`/core/v1/webhook-endpoints/${id}/pause`);
    await api.post(`/core/v1/webhook-endpoints/${id}/resume`);
    const published: string[] = [];
    for (let i = 0; i < 6; i++) published.push(await api.publish('pay.thing.happened', { i }));
    await watcher.waitFor(2 + 6 + 1);
    await pause(300);
    const got = watcher.received.map((r) => JSON.parse(r.body.toString()));
    const types = got.map((e) => e.type);
    assert.deepEqual(types.slice(0, 2), ['core.endpoint.paused', 'core.endpoint.resumed']);
    assert.deepEqual(types.slice(2).sort(), [
      ...Array(6).fill('core.delivery.dead'),
      'core.endpoint.disabled',
    ]);
    const dead = got.filter((e) => e.type === 'core.delivery.dead');
    assert.deepEqual(dead.map((e) => e.data.eventId).sort(), published.sort());
    for (const event of dead) {
      assert.equal(event.data.endpointId, id);
      assert.match(event.data.deliveryId, /^[0-9a-f-]{36}$/);
      assert.equal(event.data.reason, 'HTTP 500');
    }
    const disabled = got.find((e) => e.type === 'core.endpoint.disabled');
    assert.deepEqual(disabled.data, { endpointId: id, reason: '6 deliveries in a row died' });
    const endpoint = (await api.get(`/core/v1/webhook-endpoints/${id}`)).body;
    assert.equal(endpoint.active, false);
    assert.deepEqual(typesOf(failing), Array(12).fill('pay.thing.happened'), 'two attempts each');

    // Re-enabled, it keeps its secret and receives again; the run of deaths starts afresh.
    failing.answer(answerWith(204));
    const enabled = await api.call('PATCH', `/core/v1/webhook-endpoints/${id}`, { active: true });
    assert.equal(enabled.body.active, true);
    await api.publish('pay.thing.happened', { i: 6 });
    await failing.waitFor(13);
  });

  test('410 Gone disables the endpoint and says so; a dead delivery of an operational event reports nothing', async () => {
    const api = client(service, await service.tenant());
    const watcher = await startReceiver(answerWith(410));
    const gone = await startReceiver(answerWith(410));
    const { id: watcherId } = await api.endpoint(watcher.url, ['core.*']);
    const { id } = await api.endpoint(gone.url, ['pay.*']);
    await api.publish('pay.thing.happened');
    await gone.waitFor(1);
    // The watcher gets core.delivery.dead and core.endpoint.disabled (sent together); it answers 410
    // itself and is disabled, with no operational event about its own (operational) deliveries.
    await eventually(
      async () => (await api.get(`/core/v1/webhook-endpoints/${watcherId}`)).body.active === false,
    );
    await pause(500);
    assert.ok(watcher.received.length <= 2, 'nothing after its disabling');
    const endpoint = (await api.get(`/core/v1/webhook-endpoints/${id}`)).body;
    assert.equal(endpoint.active, false);
    const { rows } = await service.db.query(
      `select count(*)::int as n from events e where e.type like 'core.%' and e.data->>'endpointId' = $1`,
      [watcherId],
    );
    assert.equal(rows[0]?.n, 1, 'only the watcher’s own disabling, no core.delivery.dead about it');
  });
});
