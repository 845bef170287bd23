// What a receiver can ask for (contract 0.4): a name, a description, metadata and its own headers, on
// create and PATCH; the headers' values sealed at rest, never answered or audited, and sent with every
// delivery to a real receiver on loopback.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { expectProblem, startService } from './helpers/app.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const service = await startService({
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100' },
  worker: true,
});
const tenant = await service.tenant();
let n = 0;
const idem = () => ({ 'idempotency-key': `rf-${++n}` });
const TOKEN = 'tenant-token-4c1f9e';

const create = (body: Record<string, unknown>) =>
  service.request('POST', '/core/v1/webhook-endpoints', {
    key: tenant.key,
    body: { url: 'https://hooks.example.com/in', eventTypes: ['shop.*'], ...body },
    headers: idem(),
  });
const patch = (id: string, body: unknown) =>
  service.request('PATCH', `/core/v1/webhook-endpoints/${id}`, {
    key: tenant.key,
    body,
    headers: { ...idem(), 'content-type': 'application/merge-patch+json' },
  });
const get = (path: string) => service.request('GET', path, { key: tenant.key });

describe('an endpoint’s name, description, metadata and headers', () => {
  test('create answers them, the header values as ***; GET and the list the same', async () => {
    const created = await create({
      name: 'Ledger',
      description: 'the finance team’s ledger',
      metadata: { team: 'finance', 'cost.centre': '42' },
      headers: { 'x-tenant': TOKEN, 'x-region': 'eu west' },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.name, 'Ledger');
    assert.equal(created.body.description, 'the finance team’s ledger');
    assert.deepEqual(created.body.metadata, { team: 'finance', 'cost.centre': '42' });
    assert.deepEqual(created.body.headers, { 'x-tenant': '***', 'x-region': '***' });
    assert.ok(!created.text.includes(TOKEN));
    const one = await get(`/core/v1/webhook-endpoints/${created.body.id}`);
    assert.deepEqual(one.body.headers, { 'x-tenant': '***', 'x-region': '***' });
    assert.equal(one.body.name, 'Ledger');
    const listed = (await get('/core/v1/webhook-endpoints')).body.data.find(
      (e: { id: string }) => e.id === created.body.id,
    );
    assert.deepEqual(listed.metadata, { team: 'finance', 'cost.centre': '42' });
    assert.ok(!JSON.stringify(listed).includes(TOKEN));
  });

  test('without them: null, null, {} and {}', async () => {
    const created = await create({});
    assert.equal(created.status, 201, created.text);
    const { name, description, metadata, headers } = created.body;
    assert.deepEqual(
      { name, description, metadata, headers },
      { name: null, description: null, metadata: {}, headers: {} },
    );
  });

  test('the values are sealed at rest and never in the audit log; the replay of the create answers ***', async () => {
    const key = { 'idempotency-key': 'rf-sealed' };
    const body = {
      url: 'https://hooks.example.com/s',
      eventTypes: ['shop.*'],
      headers: { 'x-api-key': TOKEN },
    };
    const first = await service.request('POST', '/core/v1/webhook-endpoints', {
      key: tenant.key,
      body,
      headers: key,
    });
    const again = await service.request('POST', '/core/v1/webhook-endpoints', {
      key: tenant.key,
      body,
      headers: key,
    });
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body.headers, { 'x-api-key': '***' });
    const { rows } = await service.db.query<{
      header_names: string[];
      headers_sealed: Buffer;
      everything: string;
    }>(
      `select header_names, headers_sealed, row_to_json(w)::text as everything
         from webhook_endpoints w where id = $1`,
      [first.body.id],
    );
    const [row] = rows;
    assert.ok(row);
    assert.deepEqual(row.header_names, ['x-api-key']);
    assert.ok(row.headers_sealed.length > TOKEN.length);
    assert.ok(!row.headers_sealed.includes(Buffer.from(TOKEN)), 'sealed, not in clear');
    assert.ok(!row.everything.includes(TOKEN));
    const audit = await service.db.query<{ entry: string }>(
      `select row_to_json(a)::text as entry from audit_log a where target_id = $1`,
      [first.body.id],
    );
    assert.ok(audit.rows.length > 0);
    for (const { entry } of audit.rows) assert.ok(!entry.includes(TOKEN), entry);
    assert.match(audit.rows[0]?.entry ?? '', /headers/);
  });

  test('PATCH merges metadata and headers (null removes), replaces name and description', async () => {
    const { id } = (
      await create({ name: 'A', metadata: { a: '1', b: '2' }, headers: { 'x-a': '1', 'x-b': '2' } })
    ).body;
    const changed = await patch(id, {
      name: 'B',
      description: 'now described',
      metadata: { b: null, c: '3' },
      headers: { 'x-a': null, 'x-c': '3' },
    });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.name, 'B');
    assert.equal(changed.body.description, 'now described');
    assert.deepEqual(changed.body.metadata, { a: '1', c: '3' });
    assert.deepEqual(changed.body.headers, { 'x-b': '***', 'x-c': '***' });
    const cleared = await patch(id, { name: null, description: null });
    assert.equal(cleared.body.name, null);
    assert.equal(cleared.body.description, null);
    assert.deepEqual(cleared.body.metadata, { a: '1', c: '3' }, 'untouched when not in the patch');
  });

  test('refused with 400 and a pointer: a header the platform owns, a bad name or value, too many, too long', async () => {
    for (const name of [
      'host',
      'content-type',
      'content-length',
      'connection',
      'transfer-encoding',
      'webhook-id',
      'webhook-signature',
      'te',
      'upgrade',
    ]) {
      const response = await create({ headers: { [name]: 'x' } });
      expectProblem(response, 400, 'VALIDATION_FAILED');
      assert.ok(
        response.body.errors.some((e: { pointer: string }) => e.pointer === `/headers/${name}`),
        `${name}: ${response.text}`,
      );
    }
    const bad: Record<string, unknown>[] = [
      { headers: { 'X-Upper': 'v' } }, // names in lower case
      { headers: { 'x bad': 'v' } },
      { headers: { 'x-a': 'line\r\nbreak' } },
      { headers: { 'x-a': 'é' } },
      { headers: { 'x-a': ' padded' } },
      { headers: { 'x-a': 'v'.repeat(1025) } },
      { headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`x-${i}`, 'v'])) },
      { metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) },
      { metadata: { 'bad key!': 'v' } },
      { metadata: { k: 'v'.repeat(501) } },
      { metadata: { k: 1 } },
      { name: 'n'.repeat(101) },
      { name: '' },
      { description: 'd'.repeat(1001) },
    ];
    for (const body of bad) expectProblem(await create(body), 400, 'VALIDATION_FAILED');
    const { id } = (
      await create({ headers: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`x-${i}`, 'v'])) })
    ).body;
    const over = await patch(id, { headers: { 'x-new': 'v' } });
    expectProblem(over, 400, 'VALIDATION_FAILED');
    assert.equal(over.body.errors[0].pointer, '/headers');
    expectProblem(await patch(id, { headers: { 'webhook-timestamp': '1' } }), 400, 'VALIDATION_FAILED');
  });

  test('a delivery carries the headers, signed as ever; a PATCH binds from the next delivery', async () => {
    const receiver = await startReceiver();
    const created = await create({ headers: { 'x-tenant': TOKEN, 'user-agent': 'ledger-bot' } });
    const { id, secret } = created.body;
    await patch(id, { url: receiver.url });
    const publish = () =>
      service.request('POST', '/core/v1/events', {
        key: tenant.key,
        body: { type: 'shop.order.placed', data: { n: ++n } },
        headers: idem(),
      });
    const first = await publish();
    await receiver.waitFor(1);
    const received = receiver.received[0];
    assert.ok(received);
    assert.equal(received.headers['x-tenant'], TOKEN);
    assert.equal(received.headers['user-agent'], 'ledger-bot');
    assert.equal(received.headers['content-type'], 'application/json');
    assert.equal(received.headers['webhook-id'], first.body.eventId);
    new Webhook(secret).verify(received.body, received.headers as Record<string, string>);
    // The log shows the request's headers as sent, the values that may be secrets redacted.
    const log = await eventually(async () => {
      const page = await get(`/core/v1/webhook-endpoints/${id}/deliveries`);
      return page.body.data[0]?.attempts.length > 0 && page;
    });
    const [attempt] = log.body.data[0].attempts;
    assert.deepEqual(attempt.requestHeaders, {
      'content-type': 'application/json',
      'webhook-id': first.body.eventId,
      'webhook-timestamp': received.headers['webhook-timestamp'],
      'webhook-signature': 'v1,***',
      'x-tenant': '***',
      'user-agent': '***',
    });
    assert.ok(!log.text.includes(TOKEN), 'no header value in the log');

    await patch(id, { headers: { 'x-tenant': 'rotated', 'user-agent': null } });
    await publish();
    await receiver.waitFor(2);
    const second = receiver.received[1];
    assert.equal(second?.headers['x-tenant'], 'rotated');
    assert.notEqual(second?.headers['user-agent'], 'ledger-bot');
  });

  test('the security set holds on the new fields: another project’s endpoint is 404', async () => {
    const other = await service.tenant();
    const { id } = (await create({ headers: { 'x-a': '1' } })).body;
    const response = await service.request('PATCH', `/core/v1/webhook-endpoints/${id}`, {
      key: other.key,
      body: { headers: { 'x-a': null } },
      headers: { ...idem(), 'content-type': 'application/merge-patch+json' },
    });
    expectProblem(response, 404, 'NOT_FOUND');
  });
});
