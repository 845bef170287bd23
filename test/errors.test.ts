// Every failure is a PlatformError: unknown routes, faults, and the request id on every response.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { ERROR_CATALOGUE } from '../src/errors.ts';
import { expectProblem, startService } from './helpers/app.ts';
import { ROUTES } from './helpers/routes.ts';

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
    expectProblem(await service.request('GET', '/%E0%A4%A'), 400, 'VALIDATION_FAILED');
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

  test('OpenAPI 3.1 of every route, and a readable reference', async () => {
    const openapi = await service.request('GET', '/openapi.json');
    assert.equal(openapi.status, 200);
    assert.equal(openapi.body.openapi, '3.1.0');
    assert.ok(openapi.body.paths['/api/health'].get.responses['503']);
    assert.ok(openapi.body.paths['/core/v1/projects/me'].get);
    assert.deepEqual(openapi.body.components.securitySchemes.apiKey, {
      type: 'apiKey',
      in: 'header',
      name: 'x-api-key',
    });
    assert.ok(openapi.body.components.schemas.PlatformError);
    // Every route the tests hold to the contract is documented, with its 401 and its tag.
    const documented = Object.entries(openapi.body.paths).map(([path, item]) => ({
      pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
      item: item as Record<string, any>,
    }));
    for (const route of ROUTES) {
      const path = route.path.replace(/\{[a-z]+\}/g, 'x');
      const operation = documented.find((d) => d.pattern.test(path))?.item[route.method.toLowerCase()];
      assert.ok(operation, `${route.method} ${route.path} is in the OpenAPI document`);
      assert.ok(operation.responses['401'] && operation.tags?.length, `${route.method} ${route.path}`);
    }
    // Every operation is named, once, so that a generated client names its methods.
    const served = Object.entries(openapi.body.paths).filter(([path]) => !path.startsWith('/test/')); // this file's own
    const operations = served.flatMap(([path, item]) =>
      Object.entries(item as Record<string, { operationId?: string }>).map(([method, operation]) => ({
        at: `${method} ${path}`,
        id: operation.operationId,
      })),
    );
    const operationIds = operations.map((o) => o.id);
    assert.ok(operationIds.length >= ROUTES.length);
    const unnamed = operations.filter((o) => !o.id || !/^[a-z][A-Za-z]+$/.test(o.id)).map((o) => o.at);
    assert.deepEqual(unnamed, [], 'every operation has an operationId in camelCase');
    assert.equal(new Set(operationIds).size, operationIds.length, 'operationIds are unique');
    // Every error is documented as it is sent: application/problem+json, a PlatformError. (Health's 503
    // is its own Health body, as the spec has it, and the probes' 503 their own status.)
    const ownBodies = new Set(['/api/health 503', '/livez 503', '/readyz 503']);
    const problems = served.flatMap(([path, item]) =>
      Object.entries(item as Record<string, { responses: Record<string, { content?: object }> }>).flatMap(
        ([method, operation]) =>
          Object.entries(operation.responses)
            .filter(([status]) => Number(status) >= 400 && !ownBodies.has(`${path} ${status}`))
            .filter(
              ([, response]) => Object.keys(response.content ?? {}).join() !== 'application/problem+json',
            )
            .map(([status]) => `${method} ${path} ${status}`),
      ),
    );
    assert.deepEqual(problems, [], 'every error response is application/problem+json');
    const refused = openapi.body.paths['/core/v1/projects/me'].get.responses['401'];
    assert.equal(
      refused.content['application/problem+json'].schema.$ref,
      '#/components/schemas/PlatformError',
    );
    const docs = await service.request('GET', '/docs/');
    assert.equal(docs.status, 200);
    assert.match(docs.headers.get('content-type') ?? '', /text\/html/);
    const errors = await service.request('GET', '/docs/errors');
    for (const code of Object.keys(ERROR_CATALOGUE)) assert.ok(errors.text.includes(`id="${code}"`), code);
  });
});
