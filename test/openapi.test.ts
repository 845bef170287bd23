// The OpenAPI document as a product: what it says of every route (names, scopes, errors, integer
// queries), that its examples and its webhooks are true, that it passes Redocly's recommended ruleset,
// and that the committed snapshot (openapi.json) is what the service serves.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ERROR_CATALOGUE } from '../src/lib/errors.ts';
import { expectProblem, startService } from './helpers/app.ts';
import { startReceiver } from './helpers/receiver.ts';
import { kindOf, ROUTES } from './helpers/routes.ts';

const root = new URL('../', import.meta.url);
const service = await startService({
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100' },
  worker: true,
});
const tenant = await service.tenant();
const document = (await service.request('GET', '/openapi.json')).body;

type Operation = Record<string, any>;
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item as Record<string, Operation>).map(([method, operation]) => ({
    path,
    method,
    operation,
  })),
);

/** The operation a route of the tests' list is, by its path with ids filled in. */
function operationOf(route: { method: string; path: string }): Operation | undefined {
  const path = route.path.replace(/\{[a-z]+\}/g, 'x');
  return operations.find(
    (o) =>
      o.method === route.method.toLowerCase() &&
      new RegExp(`^${o.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path),
  )?.operation;
}

/** A validator of schemas inside the document (their $refs resolve against it). */
function validatorOf() {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ ...document, $id: 'openapi.json' });
  return (pointer: string, value: unknown) => {
    const validate = ajv.getSchema(`openapi.json#${pointer}`);
    assert.ok(validate, pointer);
    assert.ok(validate(value), `${pointer}: ${JSON.stringify(validate.errors)}`);
  };
}
const pointerTo = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

describe('the OpenAPI document', () => {
  test('3.1, every route in it with its tag and 401; each operation named once, in camelCase', () => {
    assert.equal(document.openapi, '3.1.0');
    assert.ok(document.servers?.length);
    for (const route of ROUTES) {
      const operation = operationOf(route);
      assert.ok(operation, `${route.method} ${route.path} is in the OpenAPI document`);
      assert.ok(operation.responses['401'] && operation.tags?.length, `${route.method} ${route.path}`);
    }
    const ids = operations.map((o) => o.operation.operationId);
    assert.ok(ids.length >= ROUTES.length);
    const unnamed = operations.filter((o) => !/^[a-z][A-Za-z]+$/.test(o.operation.operationId ?? ''));
    assert.deepEqual(unnamed, [], 'every operation has an operationId in camelCase');
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  });

  test('each operation needs the key and scope the service asks for; probes need none', () => {
    for (const route of ROUTES) {
      const scheme = { project: 'apiKey', operator: 'operatorKey', capability: 'capabilityKey' }[
        kindOf(route)
      ];
      const expected =
        route.scope === undefined
          ? [{ apiKey: [] }, { operatorKey: [] }]
          : [{ [scheme]: kindOf(route) === 'capability' ? [] : [route.scope] }];
      assert.deepEqual(operationOf(route)?.security, expected, `${route.method} ${route.path}`);
    }
    for (const path of ['/livez', '/readyz']) assert.deepEqual(document.paths[path].get.security, []);
    assert.deepEqual(Object.keys(document.components.securitySchemes), [
      'apiKey',
      'operatorKey',
      'capabilityKey',
    ]);
  });

  test('every error is application/problem+json, a PlatformError; writes require an idempotency-key', () => {
    // Health's 503 is its own Health body, as the spec has it, and the probes' 503 their own status.
    const ownBodies = new Set(['/api/health 503', '/livez 503', '/readyz 503']);
    const wrong = operations.flatMap(({ path, method, operation }) =>
      Object.entries(operation.responses as Record<string, { content?: Record<string, any> }>)
        .filter(([status]) => Number(status) >= 400 && !ownBodies.has(`${path} ${status}`))
        .filter(
          ([, response]) =>
            response.content?.['application/problem+json']?.schema.$ref !==
            '#/components/schemas/PlatformError',
        )
        .map(([status]) => `${method} ${path} ${status}`),
    );
    assert.deepEqual(wrong, []);
    assert.deepEqual(
      document.components.schemas.PlatformError.properties.code.enum,
      Object.keys(ERROR_CATALOGUE),
    );
    const writes = operations.filter((o) => o.method !== 'get');
    assert.ok(writes.length > 20);
    // A verification changes nothing, and usage records carry their own ids: they take no key.
    const keyless = new Set(['post /capability/v1/keys/verify', 'post /capability/v1/usage']);
    for (const { path, method, operation } of writes) {
      const header = operation.parameters?.find((p: Operation) => p.name === 'idempotency-key');
      if (keyless.has(`${method} ${path}`)) assert.equal(header, undefined, `${method} ${path}`);
      else assert.equal(header?.required, true, `${method} ${path}`);
    }
  });

  test('limit is an integer, read from the query string as one; anything else is a 400 naming it', async () => {
    const lists = operations.filter((o) =>
      o.operation.parameters?.some((p: Operation) => p.name === 'limit'),
    );
    assert.ok(lists.length >= 4);
    // Lists page by up to 100; the feeds a consumer drains (usage changes, a polling destination's), by
    // up to 1,000.
    const FEEDS = new Set(['listUsageChanges', 'listDestinationMessages']);
    for (const { operation } of lists) {
      const limit = operation.parameters.find((p: Operation) => p.name === 'limit');
      assert.deepEqual(
        [limit.in, limit.schema.type, limit.schema.minimum, limit.schema.maximum],
        ['query', 'integer', 1, FEEDS.has(operation.operationId) ? 1000 : 100],
      );
    }
    const endpoint = await service.request('POST', '/core/v1/webhook-endpoints', {
      key: tenant.key,
      headers: { 'idempotency-key': 'limit-1' },
      body: { url: 'https://hooks.example.com/', eventTypes: ['*'] },
    });
    const deliveries = `/core/v1/webhook-endpoints/${endpoint.body.id}/deliveries`;
    assert.equal((await service.request('GET', `${deliveries}?limit=7`, { key: tenant.key })).status, 200);
    for (const limit of ['0', '101', '1.5', 'abc', '', '7&limit=8']) {
      const refused = await service.request('GET', `${deliveries}?limit=${limit}`, { key: tenant.key });
      expectProblem(refused, 400, 'VALIDATION_FAILED');
      assert.equal(refused.body.errors[0].parameter, 'limit', limit);
    }
  });

  test('its examples are valid instances of their schemas', () => {
    const validate = validatorOf();
    let checked = 0;
    for (const [name, schema] of Object.entries(document.components.schemas as Record<string, any>)) {
      for (const example of schema.examples ?? []) {
        validate(`/components/schemas/${name}`, example);
        checked++;
      }
    }
    for (const { path, method, operation } of operations) {
      const media = operation.requestBody?.content?.['application/json'];
      if (!media?.example) continue;
      validate(
        `/paths/${pointerTo(path)}/${method}/requestBody/content/application~1json/schema`,
        media.example,
      );
      checked++;
    }
    assert.ok(checked >= 16, `${checked} examples`);
  });

  test('webhooks: each of the platform’s types and a project’s envelope; a real delivery fits its schema', async () => {
    const webhooks = document.webhooks as Record<string, Operation>;
    assert.deepEqual(Object.keys(webhooks).sort(), [
      'core.delivery.dead',
      'core.endpoint.disabled',
      'core.endpoint.paused',
      'core.endpoint.resumed',
      'core.erasure.failed',
      'core.webhook.test',
      'event',
    ]);
    const validate = validatorOf();
    for (const [name, { post }] of Object.entries(webhooks)) {
      const signed = post.parameters.map((p: Operation) => p.name);
      assert.deepEqual(signed, ['webhook-id', 'webhook-timestamp', 'webhook-signature'], name);
      const media = post.requestBody.content['application/json'];
      validate(
        `/webhooks/${pointerTo(name)}/post/requestBody/content/application~1json/schema`,
        media.example,
      );
    }
    const receiver = await startReceiver();
    const endpoint = await service.request('POST', '/core/v1/webhook-endpoints', {
      key: tenant.key,
      headers: { 'idempotency-key': 'webhooks-1' },
      body: { url: receiver.url, eventTypes: ['*'] },
    });
    const sent = await service.request('POST', `/core/v1/webhook-endpoints/${endpoint.body.id}/test`, {
      key: tenant.key,
      headers: { 'idempotency-key': 'webhooks-2' },
    });
    assert.equal(sent.status, 200, sent.text);
    await receiver.waitFor(1);
    const got = receiver.received[0]!;
    validate(
      '/webhooks/core.webhook.test/post/requestBody/content/application~1json/schema',
      JSON.parse(got.body),
    );
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'])
      assert.ok(got.headers[name], name);
  });

  test('it passes Redocly’s recommended ruleset with no error', async () => {
    const redocly = new URL('node_modules/.bin/redocly', root).pathname;
    const { stdout, stderr } = await promisify(execFile)(
      redocly,
      ['lint', 'openapi.json', '--format=json'], // redocly.yaml: the recommended ruleset, no telemetry
      { cwd: root.pathname, env: { ...process.env, REDOCLY_TELEMETRY: 'off' } },
    ).catch((failure) => failure);
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number } };
    assert.equal(report.totals.errors, 0, stderr + stdout);
  });

  test('the committed openapi.json is the document the service serves (npm run openapi rewrites it)', () => {
    const snapshot = JSON.parse(readFileSync(new URL('openapi.json', root), 'utf8'));
    assert.deepEqual(snapshot.servers, [
      { url: 'http://127.0.0.1:8080', description: '`npm start` on your machine (PORT, HOST)' },
    ]);
    assert.deepEqual(
      { ...document, servers: [] },
      { ...snapshot, servers: [] },
      'openapi.json is stale: run npm run openapi',
    );
  });

  test('served, it names this service’s own address: "Try it out" in /docs reaches it', async () => {
    assert.deepEqual(document.servers, [{ url: service.baseUrl, description: 'this service' }]);
    const ui = (await service.request('GET', '/docs/json')).body;
    assert.deepEqual(ui.servers, document.servers);
    const behind = await startService({ env: { PLATFORM_PUBLIC_URL: 'https://platform.example.com/' } });
    const named = (await behind.request('GET', '/openapi.json')).body;
    assert.deepEqual(named.servers, [{ url: 'https://platform.example.com', description: 'this service' }]);
  });

  test('a readable reference, and a page of every error code', async () => {
    const docs = await service.request('GET', '/docs/');
    assert.equal(docs.status, 200);
    assert.match(docs.headers.get('content-type') ?? '', /text\/html/);
    const errors = await service.request('GET', '/docs/errors');
    for (const [code, { title }] of Object.entries(ERROR_CATALOGUE)) {
      // Each code explained beyond its title: a cause and what to do.
      const row = errors.text.split(`<tr id="${code}">`)[1]?.split('</tr>')[0] ?? '';
      const [, cause = '', fix = ''] = /<p>(.+?)<\/p><p><em>What to do:<\/em> (.+?)<\/p>/.exec(row) ?? [];
      assert.ok(cause.length > 20 && cause !== title, `${code}: its cause`);
      assert.ok(fix.length > 20 && fix !== cause, `${code}: what to do`);
    }
    assert.match(
      errors.text.split('<tr id="WEBHOOK_URL_NOT_ALLOWED">')[1] ?? '',
      /PLATFORM_WEBHOOK_ALLOW_PRIVATE=1/,
      'a local receiver is one setting away',
    );
  });
});
