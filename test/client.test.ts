// The typed client (packages/client) against the running service: every operation of the document once,
// lists across pages, a write whose answer is lost retried into one effect, a 429 waited out, and the
// service's problems as one typed error.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, test } from 'node:test';
import { PlatformAdminClient, PlatformClient, PlatformError } from '../packages/client/src/index.ts';
import { startService } from './helpers/app.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const service = await startService({
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100' },
  worker: true,
});
const tenant = await service.tenant();
const operator = await service.operator();

/** fetch, recording each attempt's method, path and status. */
function recordingFetch() {
  const calls: { method: string; path: string; status: number }[] = [];
  const fetcher: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    calls.push({
      method: init?.method ?? 'GET',
      path: new URL(String(input)).pathname,
      status: response.status,
    });
    return response;
  };
  return { calls, fetch: fetcher };
}

describe('the client', () => {
  test('every operation of the OpenAPI document, once, through PlatformClient and PlatformAdminClient', async () => {
    const { calls, fetch } = recordingFetch();
    const client = new PlatformClient({ apiKey: tenant.key, baseUrl: service.baseUrl, fetch });
    const admin = new PlatformAdminClient({ apiKey: operator.key, baseUrl: service.baseUrl, fetch });
    const receiver = await startReceiver();

    assert.equal((await client.health.get()).status, 'ok');
    await client.health.live();
    await client.health.ready();
    assert.equal((await client.projects.me()).id, tenant.projectId);

    await client.eventTypes.put('pay.payment.succeeded', { description: 'A payment was captured.' });
    await client.eventTypes.put('pay.payment.refunded', { description: 'Declared, then withdrawn.' });
    assert.ok((await client.eventTypes.list()).data.some((t) => t.name === 'pay.payment.succeeded'));
    await client.eventTypes.delete('pay.payment.refunded');

    const endpoint = await client.webhookEndpoints.create({ url: receiver.url, eventTypes: ['pay.*'] });
    assert.match(endpoint.secret, /^whsec_/);
    assert.equal((await client.webhookEndpoints.list()).data.length, 1);
    assert.equal((await client.webhookEndpoints.get(endpoint.id)).url, receiver.url);
    const updated = await client.webhookEndpoints.update(endpoint.id, { rateLimitPerSecond: 100 });
    assert.equal(updated.rateLimitPerSecond, 100);

    const published = await client.events.publish({ type: 'pay.payment.succeeded', data: { amount: 1 } });
    assert.equal(published.deliveries, 1);
    await receiver.waitFor(1);
    const event = await eventually(async () => {
      const read = await client.events.get(published.eventId);
      return read.deliveries[0]?.state === 'delivered' && read;
    });
    assert.equal(event.data.amount, 1);
    assert.equal((await client.events.replay(published.eventId)).deliveries, 1);
    assert.equal((await client.webhookEndpoints.sendTest(endpoint.id)).endpointId, endpoint.id);
    await receiver.waitFor(3);
    const listed = await client.events.list({ type: 'pay.payment.succeeded', limit: 1 });
    assert.equal(listed.data[0]?.id, published.eventId);
    const seen: string[] = [];
    for await (const listedEvent of client.events.iterate({ limit: 1 })) seen.push(listedEvent.type);
    assert.deepEqual(seen, ['core.webhook.test', 'pay.payment.succeeded']); // a page of one at a time
    assert.equal((await client.webhookEndpoints.stats(endpoint.id)).hours.length, 24);
    assert.ok((await client.webhookEndpoints.listDeliveries(endpoint.id)).data.length >= 3);

    // Held while paused: a waiting delivery to send now, and what waits to cancel.
    assert.equal((await client.webhookEndpoints.pause(endpoint.id)).paused, true);
    const held = await client.events.publish({ type: 'pay.payment.succeeded', data: { amount: 2 } });
    const waiting = (await client.events.get(held.eventId)).deliveries[0]!;
    assert.equal(waiting.state, 'pending');
    assert.equal((await client.deliveries.retry(waiting.id)).deliveryId, waiting.id);
    assert.equal(typeof (await client.webhookEndpoints.cancelPending(endpoint.id)).cancelled, 'number');
    assert.equal((await client.webhookEndpoints.resume(endpoint.id)).paused, false);

    const rotated = await client.webhookEndpoints.rotateSecret(endpoint.id);
    assert.notEqual(rotated.secret, endpoint.secret);
    assert.equal((await client.webhookEndpoints.retirePreviousSecret(endpoint.id)).hasPreviousSecret, false);
    const since = new Date(Date.now() - 60_000).toISOString();
    const recovery = await client.webhookEndpoints.recover(endpoint.id, { states: ['delivered'], since });
    assert.ok(recovery.jobId && recovery.matched >= 1);
    assert.equal((await client.jobs.get(recovery.jobId)).id, recovery.jobId);

    const portal = await client.portalSessions.create({ ttlSeconds: 600 });
    assert.match(portal.url, /\/portal\/enter#code=/);
    assert.equal((await client.portalSessions.list()).data[0]?.id, portal.id);
    assert.equal(await client.portalSessions.revoke(portal.id), undefined);
    assert.ok((await client.usage.get()).data.length > 0);
    const erased = await client.subjects.erase({ subject: { type: 'email', value: 'ada@example.com' } });
    assert.equal((await client.subjects.erasure(erased.erasureId)).state, 'complete');
    assert.equal(await client.webhookEndpoints.delete(endpoint.id), undefined);

    // A destination: a feed to poll, through every operation a webhook endpoint has.
    const feed = await client.destinations.create({ type: 'polling', target: {}, eventTypes: ['pay.*'] });
    assert.equal(feed.type, 'polling');
    assert.deepEqual(
      (await client.destinations.list()).data.map((d) => d.id),
      [feed.id],
    );
    assert.equal((await client.destinations.get(feed.id)).type, 'polling');
    assert.equal((await client.destinations.update(feed.id, { name: 'Feed' })).name, 'Feed');
    assert.equal((await client.destinations.sendTest(feed.id)).endpointId, feed.id);
    const message = await eventually(async () => (await client.destinations.listMessages(feed.id)).data[0]);
    assert.equal(message.type, 'core.webhook.test');
    assert.equal((await client.destinations.stats(feed.id)).hours.length, 24);
    assert.equal((await client.destinations.listDeliveries(feed.id)).data.length, 1);
    assert.equal((await client.destinations.pause(feed.id)).paused, true);
    assert.equal((await client.destinations.resume(feed.id)).paused, false);
    assert.equal((await client.destinations.cancelPending(feed.id)).cancelled, 0);
    assert.match((await client.destinations.rotateSecret(feed.id)).secret, /^whsec_/);
    assert.equal((await client.destinations.retirePreviousSecret(feed.id)).hasPreviousSecret, false);
    const counted = await client.destinations.recover(feed.id, { states: ['dead'], since, dryRun: true });
    assert.equal(counted.matched, 0);
    assert.equal(await client.destinations.delete(feed.id), undefined);

    const project = await admin.projects.create({ slug: 'client-every-op', name: 'Every operation' });
    assert.equal((await admin.projects.get(project.id)).slug, 'client-every-op');
    assert.equal((await admin.projects.update(project.id, { name: 'Renamed' })).name, 'Renamed');
    assert.ok((await admin.projects.list({ slugPrefix: 'client-every' })).data.length === 1);
    const key = await admin.keys.create(project.id, { scopes: ['events:write'] });
    assert.match(key.key, /^pk_test_/);
    assert.equal((await admin.keys.list(project.id)).data.length, 1);
    assert.ok((await admin.keys.revoke(key.id)).revokedAt);
    const limit = { projectId: project.id, capability: 'core', metric: 'events_published' };
    assert.equal((await admin.limits.set(limit, { dailyLimit: 10 })).dailyLimit, 10);
    assert.ok((await admin.limits.list(project.id)).data.some((l) => l.source === 'project'));
    await admin.limits.clear(limit);
    assert.ok((await admin.audit.list({ projectId: project.id })).data.length > 0);
    assert.ok(Array.isArray((await admin.projects.usage(project.id)).data));
    const capability = await admin.capabilities.create({ name: 'clientcap', description: 'A product' });
    assert.match(capability.key, /^pk_cap_/);
    assert.deepEqual(
      (await admin.capabilities.list()).data.map((c) => c.name),
      ['clientcap'],
    );
    assert.deepEqual((await admin.capabilities.get('clientcap')).breakerReports, []);
    assert.equal(
      (await admin.capabilities.update('clientcap', { upstream: 'http://notify.internal:8080' })).upstream,
      'http://notify.internal:8080',
    );
    assert.match((await admin.capabilities.createKey('clientcap')).key, /^pk_cap_/);
    assert.match((await admin.capabilities.rotateSigningSecret('clientcap')).signingSecret, /^whsec_/);
    assert.equal(
      (await admin.capabilities.retirePreviousSigningSecret('clientcap')).hasPreviousSigningSecret,
      false,
    );
    await admin.capabilities.remove('clientcap');
    assert.equal(
      (await admin.capabilities.list()).data.some((c) => c.name === 'clientcap'),
      false,
    );

    // Every operation of the document was called, and nothing failed on the way.
    const document = (await service.request('GET', '/openapi.json')).body;
    const operations = Object.entries(document.paths as Record<string, object>).flatMap(([path, item]) =>
      Object.keys(item).map((method) => ({
        name: `${method.toUpperCase()} ${path}`,
        pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
        method: method.toUpperCase(),
      })),
    );
    // The capability plane's routes are a capability's, called through @platform-core/capability.
    const missed = operations.filter(
      (o) =>
        !o.name.includes(' /capability/') &&
        !calls.some((c) => c.method === o.method && o.pattern.test(c.path)),
    );
    assert.deepEqual(
      missed.map((o) => o.name),
      [],
    );
    assert.deepEqual(
      calls.filter((c) => c.status >= 400),
      [],
    );
  });

  test('async iterators follow the cursor across pages', async () => {
    const { calls, fetch } = recordingFetch();
    const admin = new PlatformAdminClient({ apiKey: operator.key, baseUrl: service.baseUrl, fetch });
    for (const n of [1, 2, 3, 4, 5]) await admin.projects.create({ slug: `pages-${n}`, name: `Page ${n}` });
    const slugs: string[] = [];
    for await (const project of admin.projects.iterate({ slugPrefix: 'pages-', limit: 2 }))
      slugs.push(project.slug);
    assert.deepEqual(slugs.sort(), ['pages-1', 'pages-2', 'pages-3', 'pages-4', 'pages-5']);
    assert.equal(calls.length, 5 + 3, 'five creates, then three pages of 2, 2 and 1');
    let first: string | undefined;
    for await (const project of admin.projects.iterate({ slugPrefix: 'pages-', limit: 2 })) {
      first = project.slug;
      break; // leaving the loop fetches nothing more
    }
    assert.ok(first);
    assert.equal(calls.length, 9);
  });

  test('a write whose answer is lost is retried with its idempotency key: one effect, the same answer', async () => {
    const proxy = await losingFirstAnswer(new URL(service.baseUrl));
    const { calls, fetch } = recordingFetch();
    const who = await service.tenant();
    const client = new PlatformClient({ apiKey: who.key, baseUrl: proxy.url, fetch, retryDelayMs: 10 });
    const created = await client.webhookEndpoints.create({
      url: 'http://127.0.0.1:9/once',
      eventTypes: ['*'],
    });
    assert.equal(proxy.dropped, 1, 'the first answer was lost after the service had made the endpoint');
    assert.equal(calls.length, 1, 'the lost attempt never answered; the retry did');
    const endpoints = (await client.webhookEndpoints.list()).data;
    assert.deepEqual(
      endpoints.map((e) => e.id),
      [created.id],
    );
  });

  test('a 429 is waited out for its retry-after, then the call succeeds', async () => {
    const limited = await startService({
      env: { PLATFORM_RATE_LIMIT_PER_SECOND: '1', PLATFORM_RATE_LIMIT_BURST: '1' },
    });
    const who = await limited.tenant();
    const { calls, fetch } = recordingFetch();
    const client = new PlatformClient({ apiKey: who.key, baseUrl: limited.baseUrl, fetch });
    const started = performance.now();
    await client.projects.me();
    const again = await client.projects.me();
    assert.equal(again.id, who.projectId);
    assert.deepEqual(
      calls.map((c) => c.status),
      [200, 429, 200],
    );
    assert.ok(performance.now() - started >= 900, 'it waited the second retry-after asked');
    const impatient = new PlatformClient({ apiKey: who.key, baseUrl: limited.baseUrl, maxRetries: 0 });
    const refused = await impatient.projects.me().catch((error: unknown) => error);
    assert.ok(refused instanceof PlatformError);
    assert.deepEqual([refused.status, refused.code, refused.retryAfter], [429, 'RATE_LIMITED', 1]);
  });

  test('problems are PlatformError with status, code, requestId and errors; only retryable ones are retried', async () => {
    const { calls, fetch } = recordingFetch();
    const client = new PlatformClient({ apiKey: tenant.key, baseUrl: service.baseUrl, fetch });
    const missing = await client.webhookEndpoints.get('0193b0a4-1e0a-7c1e-9d6e-2f4b8a1c3d5e').catch((e) => e);
    assert.ok(missing instanceof PlatformError);
    assert.deepEqual([missing.status, missing.code], [404, 'NOT_FOUND']);
    assert.match(missing.requestId ?? '', /^[0-9a-f-]{36}$/);
    const invalid = await client.webhookEndpoints
      .create({ url: 'not a url', eventTypes: ['*'] })
      .catch((e) => e);
    assert.ok(invalid instanceof PlatformError);
    assert.deepEqual([invalid.status, invalid.code], [400, 'VALIDATION_FAILED']);
    assert.equal(invalid.errors[0]?.pointer, '/url');
    const reader = await service.tenant(['webhooks:read']);
    const scoped = new PlatformClient({ apiKey: reader.key, baseUrl: service.baseUrl });
    const refused = await scoped.events.publish({ type: 'pay.payment.succeeded', data: {} }).catch((e) => e);
    assert.deepEqual(
      [refused.status, refused.code, refused.requiredScope],
      [403, 'INSUFFICIENT_SCOPE', 'events:write'],
    );
    const wrong = new PlatformClient({ apiKey: 'pk_test_nope', baseUrl: service.baseUrl });
    assert.equal((await wrong.projects.me().catch((e) => e)).code, 'API_KEY_INVALID');
    assert.equal(calls.length, 2, 'a 404 and a 400 are answers, not retried');
    const nowhere = new PlatformClient({
      apiKey: tenant.key,
      baseUrl: 'http://127.0.0.1:1',
      retryDelayMs: 1,
    });
    const down = await nowhere.projects.me().catch((e) => e);
    assert.deepEqual([down.status, down.code], [0, 'CONNECTION_FAILED']);
  });
});

/** A TCP proxy that passes requests on and loses the first answer (closing that connection instead). */
async function losingFirstAnswer(target: URL) {
  let dropped = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    upstream.on('data', (chunk) => {
      if (dropped === 0) {
        dropped++;
        client.destroy();
        upstream.destroy();
      } else client.write(chunk);
    });
    upstream.on('end', () => client.end());
    for (const socket of [client, upstream]) socket.on('error', () => socket.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => {
    for (const socket of sockets) socket.destroy(); // kept alive by the client otherwise, for 72 s
    return new Promise((resolve) => server.close(resolve));
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get dropped() {
      return dropped;
    },
  };
}
