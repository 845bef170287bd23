// The project's logo in the portal, served by the service from the project's https logoUrl: a real
// `platform serve` (trusting a certificate made for the test through NODE_EXTRA_CA_CERTS) fetches it from
// an HTTPS server on loopback, and only an image of at most 256 KiB is shown.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { startService, TEST_ENCRYPTION_KEY } from './helpers/app.ts';
import { startBrowser } from './helpers/browser.ts';
import { startProcess } from './helpers/process.ts';

// A 1×1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const dir = mkdtempSync(path.join(tmpdir(), 'platform-logo-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
execFileSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    key,
    '-out',
    cert,
  ],
  { stdio: 'ignore' },
);

let fetches = 0;
const images = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (request, response) => {
  fetches++;
  if (request.url === '/logo.png') return response.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
  if (request.url === '/big.png')
    return response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(300 * 1024));
  if (request.url === '/moved.png') return response.writeHead(302, { location: '/logo.png' }).end();
  response.writeHead(200, { 'content-type': 'text/html' }).end('<script>alert(1)</script>');
});
await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
after(() => images.close());
const origin = `https://127.0.0.1:${(images.address() as AddressInfo).port}`;

const service = await startService();
const served = await startProcess('serve', {
  DATABASE_URL: service.context.config.databaseUrl,
  PLATFORM_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
  PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1',
  NODE_EXTRA_CA_CERTS: cert,
});
const operator = await service.operator();
let n = 0;

/** A project whose logo is at this path of the image server, and a portal cookie for it. */
async function portalWithLogo(logoPath: string) {
  const tenant = await service.tenant();
  const patched = await service.request('PATCH', `/admin/v1/projects/${tenant.projectId}`, {
    key: operator.key,
    headers: { 'idempotency-key': `logo-${++n}` },
    body: { theme: { logoUrl: `${origin}${logoPath}` } },
  });
  assert.equal(patched.status, 200, patched.text);
  const minted = await service.request('POST', '/core/v1/portal-sessions', {
    key: tenant.key,
    headers: { 'idempotency-key': `logo-${++n}` },
    body: {},
  });
  const code = new URL(minted.body.url).hash.replace('#code=', '');
  const entered = await fetch(`${served.baseUrl}/portal/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  assert.equal(entered.status, 200);
  const cookie = (entered.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  return { cookie, code };
}

describe('the portal’s logo', () => {
  test('fetched from the project’s https address through the address policy, served as an image, kept', async () => {
    const { cookie } = await portalWithLogo('/logo.png');
    const before = fetches;
    for (let i = 0; i < 3; i++) {
      const logo = await fetch(`${served.baseUrl}/portal/logo`, { headers: { cookie } });
      assert.equal(logo.status, 200);
      assert.equal(logo.headers.get('content-type'), 'image/png');
      assert.match(logo.headers.get('content-security-policy') ?? '', /sandbox/);
      assert.deepEqual(Buffer.from(await logo.arrayBuffer()), PNG);
    }
    assert.equal(fetches - before, 1, 'fetched once, then kept');
    assert.equal((await fetch(`${served.baseUrl}/portal/logo`)).status, 404, 'no session, no logo');
  });

  test('what is not an image of at most 256 KiB, or redirects, is not shown', async () => {
    for (const logoPath of ['/page.html', '/big.png', '/moved.png']) {
      const { cookie } = await portalWithLogo(logoPath);
      const logo = await fetch(`${served.baseUrl}/portal/logo`, { headers: { cookie } });
      assert.equal(logo.status, 404, logoPath);
      await logo.arrayBuffer();
    }
  });

  test('the page shows it beside the project’s name', async () => {
    const { cookie } = await portalWithLogo('/logo.png');
    const browser = await startBrowser();
    const context = await browser.newContext();
    await context.addCookies([
      { name: 'platform_portal', value: cookie.split('=')[1] ?? '', url: served.baseUrl },
    ]);
    const page = await context.newPage();
    await page.goto(`${served.baseUrl}/portal/`);
    await page.locator('img.logo').waitFor();
    await page.waitForFunction("document.querySelector('img.logo').naturalWidth === 1"); // loaded, 1×1
  });
});
