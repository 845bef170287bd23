// Receivers that ask for more (contract 0.4): OAuth 2.0 client credentials against a real token server on
// loopback (one token a life, a new one on a 401, a failure said in lastError, the address policy on the
// token URL), and mutual TLS against a real HTTPS receiver that demands a client certificate (made here
// with openssl), delivered by a `platform worker` process that trusts the test's certificate authority.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, describe, test } from 'node:test';
import { parseKeyring } from '../src/lib/crypto.ts';
import { sealTls } from '../src/webhooks/credentials.ts';
import { expectProblem, startService, TEST_ENCRYPTION_KEY, type Tenant } from './helpers/app.ts';
import { startProcess } from './helpers/process.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

// Every log line of the service (API and worker), to find no secret in any of them.
const logs: string[] = [];
const logTo = new PassThrough();
logTo.on('data', (line: Buffer) => logs.push(line.toString()));
const service = await startService({
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100', PLATFORM_RETRY_SCHEDULE: '60' },
  worker: true,
  logTo,
});
let n = 0;
const idem = () => ({ 'idempotency-key': `auth-${++n}` });
const call = (who: Tenant, method: string, urlPath: string, body?: unknown) =>
  service.request(method, urlPath, {
    key: who.key,
    body,
    headers: { ...idem(), ...(method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {}) },
  });
const publish = (who: Tenant, data: unknown = { n: ++n }) =>
  call(who, 'POST', '/core/v1/events', { type: 'shop.order.placed', data });
const deliveryOf = async (who: Tenant, eventId: string) =>
  (await call(who, 'GET', `/core/v1/events/${eventId}`)).body.deliveries[0];

/** A token server on loopback: counts its requests, checks the client's credentials, answers as told. */
async function tokenServer() {
  const state = { requests: 0, issued: 0, status: 200, bodies: [] as string[] };
  const server = createHttpServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      state.requests++;
      state.bodies.push(body);
      const basic = Buffer.from('client-1:s3cret-value').toString('base64');
      if (request.headers.authorization !== `Basic ${basic}`) return response.writeHead(401).end();
      if (state.status !== 200) return response.writeHead(state.status).end('{"error":"down"}');
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ access_token: `tok-${++state.issued}`, token_type: 'Bearer', expires_in: 3600 }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => server.close());
  return { state, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/token` };
}

const AUTH = (tokenUrl: string) => ({
  type: 'oauth2_client_credentials',
  tokenUrl,
  clientId: 'client-1',
  clientSecret: 's3cret-value',
  scope: 'webhooks:receive',
});

describe('OAuth 2.0 client credentials', () => {
  test('one token for many deliveries; a 401 fetches a new one once; the secret never answered', async () => {
    const who = await service.tenant();
    const tokens = await tokenServer();
    let accepted = 'tok-1';
    const receiver = await startReceiver((received, _i, response) => {
      response.writeHead(received.headers.authorization === `Bearer ${accepted}` ? 204 : 401).end();
    });
    const created = await call(who, 'POST', '/core/v1/webhook-endpoints', {
      url: receiver.url,
      eventTypes: ['shop.*'],
      auth: AUTH(tokens.url),
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.auth, { ...AUTH(tokens.url), clientSecret: '***' });
    assert.ok(!created.text.includes('s3cret-value'));
    for (let i = 0; i < 5; i++) await publish(who);
    await receiver.waitFor(5);
    assert.equal(tokens.state.requests, 1, 'one token request for five deliveries');
    assert.match(tokens.state.bodies[0] ?? '', /grant_type=client_credentials/);
    assert.match(tokens.state.bodies[0] ?? '', /scope=webhooks%3Areceive/);

    // The receiver stops taking the first token: the next delivery's 401 fetches a new one and succeeds.
    accepted = 'tok-2';
    const { body } = await publish(who);
    const delivered = await eventually(async () => {
      const delivery = await deliveryOf(who, body.eventId);
      return delivery?.state === 'delivered' && delivery;
    });
    assert.equal(delivered.attemptCount, 1, 'the refresh is part of the attempt');
    const log = await call(who, 'GET', `/core/v1/webhook-endpoints/${created.body.id}/deliveries`);
    assert.equal(log.body.data[0].attempts[0].requestHeaders.authorization, 'Bearer ***');
    assert.ok(!/tok-\d/.test(log.text), 'no token in the log');
    assert.equal(tokens.state.requests, 2);
    const { rows } = await service.db.query<{ text: string }>(
      `select row_to_json(w)::text as text from webhook_endpoints w where id = $1`,
      [created.body.id],
    );
    assert.ok(!rows[0]?.text.includes('s3cret-value'), 'sealed at rest');
  });

  test('a token endpoint that fails fails the attempt, and lastError says so', async () => {
    const who = await service.tenant();
    const tokens = await tokenServer();
    tokens.state.status = 503;
    const receiver = await startReceiver();
    await call(who, 'POST', '/core/v1/webhook-endpoints', {
      url: receiver.url,
      eventTypes: ['shop.*'],
      auth: AUTH(tokens.url),
    });
    const { body } = await publish(who);
    const failed = await eventually(async () => {
      const delivery = await deliveryOf(who, body.eventId);
      return delivery?.attemptCount === 1 && delivery;
    });
    assert.equal(failed.state, 'pending');
    assert.match(failed.lastError, /OAuth token endpoint answered 503/);
    assert.equal(receiver.received.length, 0, 'nothing sent without a token');
  });

  test('refused: an authorization header beside auth; a token URL the address policy refuses', async () => {
    const who = await service.tenant();
    const both = await call(who, 'POST', '/core/v1/webhook-endpoints', {
      url: 'https://hooks.example.com/a',
      eventTypes: ['*'],
      auth: AUTH('https://auth.example.com/token'),
      headers: { authorization: 'Bearer static' },
    });
    expectProblem(both, 400, 'VALIDATION_FAILED');
    assert.equal(both.body.errors[0].pointer, '/headers/authorization');
    const strict = await startService({ resolve: async () => ['93.184.216.34'] });
    const tenant = await strict.tenant();
    for (const tokenUrl of [
      'http://auth.example.com/token',
      'https://127.0.0.1/token',
      'https://10.0.0.1/t',
    ]) {
      const response = await strict.request('POST', '/core/v1/webhook-endpoints', {
        key: tenant.key,
        body: { url: 'https://hooks.example.com/a', eventTypes: ['*'], auth: AUTH(tokenUrl) },
        headers: idem(),
      });
      expectProblem(response, 400, 'WEBHOOK_URL_NOT_ALLOWED');
      assert.equal(response.body.errors[0].pointer, '/auth/tokenUrl');
    }
  });
});

/** A certificate authority, a server certificate for 127.0.0.1 and a client certificate, made by openssl. */
function certificates() {
  const dir = mkdtempSync(path.join(tmpdir(), 'mtls-'));
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  run('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/CN=test-ca', '-days', '2');
  for (const name of ['server', 'client']) {
    run('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    writeFileSync(
      path.join(dir, `${name}.ext`),
      name === 'server' ? 'subjectAltName=IP:127.0.0.1' : 'extendedKeyUsage=clientAuth',
    );
    run(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    );
  }
  const read = (file: string) => readFileSync(path.join(dir, file), 'utf8');
  return {
    dir,
    ca: read('ca.pem'),
    server: { cert: read('server.pem'), key: read('server.key') },
    client: { cert: read('client.pem'), key: read('client.key') },
  };
}

describe('mutual TLS', () => {
  test('a receiver that demands a client certificate gets it; without one it refuses the delivery', async () => {
    const pem = certificates();
    const seen: string[] = [];
    const server = createHttpsServer(
      { ...pem.server, ca: pem.ca, requestCert: true, rejectUnauthorized: true },
      (request, response) => {
        seen.push(
          String(
            (
              request.socket as { getPeerCertificate?: () => { subject?: { CN?: string } } }
            ).getPeerCertificate?.().subject?.CN,
          ),
        );
        request.resume();
        request.on('end', () => response.writeHead(204).end());
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    after(() => server.close());
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    // The deliveries go from a worker process of its own, which trusts the test's authority.
    const stopped = service.worker?.stop();
    await stopped;
    await startProcess('worker', {
      DATABASE_URL: service.context.config.databaseUrl,
      PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
      PLATFORM_WORKER_POLL_MS: '100',
      PLATFORM_RETRY_SCHEDULE: '60',
      PLATFORM_LOG_LEVEL: 'warn',
      NODE_EXTRA_CA_CERTS: path.join(pem.dir, 'ca.pem'),
    });
    const who = await service.tenant();
    const mutual = await call(who, 'POST', '/core/v1/webhook-endpoints', {
      url,
      eventTypes: ['shop.*'],
      tls: { certificate: pem.client.cert, privateKey: pem.client.key },
    });
    assert.equal(mutual.status, 201, mutual.text);
    assert.equal(mutual.body.tls.privateKey, '***');
    assert.equal(mutual.body.tls.certificate, pem.client.cert);
    assert.ok(!mutual.text.includes('PRIVATE KEY'));
    const plain = await call(who, 'POST', '/core/v1/webhook-endpoints', { url, eventTypes: ['shop.*'] });
    const { body } = await publish(who);
    const deliveries = await eventually(async () => {
      const all = (await call(who, 'GET', `/core/v1/events/${body.eventId}`)).body.deliveries as {
        endpointId: string;
        state: string;
        attemptCount: number;
        lastError: string | null;
      }[];
      return all.every((d) => d.attemptCount >= 1) && all;
    }, 30_000);
    const withCertificate = deliveries.find((d) => d.endpointId === mutual.body.id);
    const without = deliveries.find((d) => d.endpointId === plain.body.id);
    assert.equal(withCertificate?.state, 'delivered', JSON.stringify(withCertificate));
    assert.deepEqual(seen, ['client']);
    assert.equal(without?.state, 'pending');
    assert.ok(without?.lastError, 'the handshake refused it');
  });

  test('no log line of the service holds a client secret, a token, a private key or a header value', async () => {
    assert.ok(logs.length > 10, `${logs.length} lines logged`);
    const all = logs.join('');
    for (const secret of ['s3cret-value', 'tok-1', 'tok-2', 'PRIVATE KEY', 'Bearer static'])
      assert.ok(!all.includes(secret), `${secret} in the log`);
  });

  test('a pair that does not match, or not PEM, is a 400; an expired certificate is refused', async () => {
    const pem = certificates();
    const other = certificates();
    const who = await service.tenant();
    const cases: [unknown, string][] = [
      [{ certificate: pem.client.cert, privateKey: other.client.key }, '/tls/privateKey'],
      [{ certificate: 'not a certificate', privateKey: pem.client.key }, '/tls/certificate'],
      [{ certificate: pem.client.cert, privateKey: 'nope' }, '/tls/privateKey'],
    ];
    for (const [tls, pointer] of cases) {
      const response = await call(who, 'POST', '/core/v1/webhook-endpoints', {
        url: 'https://hooks.example.com/t',
        eventTypes: ['*'],
        tls,
      });
      expectProblem(response, 400, 'VALIDATION_FAILED');
      assert.equal(response.body.errors[0].pointer, pointer);
    }
    // The same pair, three days on (made for two): expired.
    const later = new Date(Date.now() + 3 * 86_400_000);
    assert.throws(
      () =>
        sealTls(
          parseKeyring(TEST_ENCRYPTION_KEY),
          'e',
          { certificate: pem.client.cert, privateKey: pem.client.key },
          later,
        ),
      /expired/,
    );
  });
});
