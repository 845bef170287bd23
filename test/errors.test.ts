// Every failure is a PlatformError: unknown routes, faults, and the request id on every response.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { expectProblem, startService } from './helpers/app.ts';

const logs: string[] = [];
const logStream = new PassThrough();
logStream.on('data', (chunk) => logs.push(...chunk.toString().split('\n').filter(Boolean)));

const service = await startService({
  logTo: logStream,
  setup: (app) => {
    app.get('/test/fault', async () => {
      throw new Error('boom: password=hunter2 at SELECT * FROM secrets');
    });
  },
});
const tenant = await service.tenant();

describe('errors', () => {
  test('unknown routes → 404 NOT_FOUND for every method, with or without a key', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      expectProblem(await service.request(method, '/core/v1/nothing-here'), 404, 'NOT_FOUND');
      expectProblem(
        await service.request(method, '/core/v2/projects/me', { key: tenant.key }),
        404,
        'NOT_FOUND',
      );
    }
    expectProblem(await service.request('GET', '/%E0%A4%A'), 404, 'NOT_FOUND');
    expectProblem(await service.request('GET', `/${'x'.repeat(5000)}`), 404, 'NOT_FOUND');
  });

  test('a fault → 500 INTERNAL with no stack or detail in the body, logged with the request id', async () => {
    const response = await service.request('GET', '/test/fault', { key: tenant.key });
    expectProblem(response, 500, 'INTERNAL');
    assert.ok(!response.text.includes('hunter2') && !response.text.includes('SELECT'), response.text);
    const line = logs
      .map((l) => JSON.parse(l))
      .find((l) => l.level === 50 && l.requestId === response.body.requestId);
    assert.ok(line, 'the fault is logged with its request id');
    assert.match(line.err.stack, /boom/);
  });

  test('every response carries x-request-id; a sane caller id is kept, an odd one replaced', async () => {
    const responses = [
      await service.request('GET', '/api/health', { key: tenant.key }),
      await service.request('GET', '/livez'),
      await service.request('GET', '/openapi.json'),
      await service.request('GET', '/nope'),
      await service.request('GET', '/api/health'),
    ];
    for (const response of responses)
      assert.match(response.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const kept = await service.request('GET', '/livez', { headers: { 'x-request-id': 'trace-abc-123' } });
    assert.equal(kept.headers.get('x-request-id'), 'trace-abc-123');
    const replaced = await service.request('GET', '/nope', { headers: { 'x-request-id': 'has spaces' } });
    assert.notEqual(replaced.headers.get('x-request-id'), 'has spaces');
    assert.equal(replaced.body.requestId, replaced.headers.get('x-request-id'));
  });

  test('no key and no secret in any log line', async () => {
    await service.request('GET', '/core/v1/projects/me', { key: tenant.key });
    assert.ok(logs.length > 0);
    assert.ok(!logs.some((l) => l.includes(tenant.key)), 'a key was logged');
  });
});
