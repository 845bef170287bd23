// The webhook address policy, table-driven, with a resolver the test controls.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkAddress, checkWebhookUrl, type Resolver } from '../src/webhooks/address-policy.ts';

const DNS: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34'],
  'dual.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'sneaky.example.com': ['127.0.0.1'], // a public-looking name that resolves inward
  'half.example.com': ['93.184.216.34', '10.0.0.7'], // one bad address is enough
  'metadata.example.com': ['169.254.169.254'],
  'v6private.example.com': ['fd00:ec2::254'],
  'mapped.example.com': ['::ffff:192.168.1.1'],
  'xn--bcher-kva.de': ['81.169.145.1'],
};
const resolve: Resolver = async (host) => {
  const found = DNS[host];
  if (!found) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};
const check = (url: string, allowPrivate = false) => checkWebhookUrl(url, { allowPrivate, resolve });

// [url, allowed, a word the refusal should contain]
const CASES: [string, boolean, string?][] = [
  // public, allowed
  ['https://hooks.example.com/webhooks', true],
  ['https://hooks.example.com:8443/path?q=1', true],
  ['https://hooks.example.com./trailing-dot', true],
  ['https://dual.example.com/', true],
  ['https://bücher.de/hook', true], // IDN → punycode, resolved as such
  ['https://93.184.216.34/', true],
  ['https://[2606:2800:220:1:248:1893:25c8:1946]/', true],
  ['https://[::ffff:93.184.216.34]/', true], // a mapped public address is public
  ['https://[64:ff9b::5db8:d822]/', true], // NAT64 of 93.184.216.34
  ['https://[2002:5db8:d822::1]/', true], // 6to4 of 93.184.216.34
  // scheme, form, length
  ['http://hooks.example.com/', false, 'scheme'],
  ['ftp://hooks.example.com/', false, 'scheme'],
  ['javascript:alert(1)', false, 'scheme'],
  ['hooks.example.com/path', false, 'valid'],
  ['https://user:pw@hooks.example.com/', false, 'password'],
  ['https://user@hooks.example.com/', false, 'user'],
  ['https://hooks.example.com/#frag', false, 'fragment'],
  [`https://hooks.example.com/${'a'.repeat(2040)}`, false, '2048'],
  // IPv4 ranges
  ['https://127.0.0.1/', false, 'loopback'],
  ['https://127.255.255.254/', false, 'loopback'],
  ['https://10.1.2.3/', false, 'private'],
  ['https://172.16.0.1/', false, 'private'],
  ['https://172.31.255.255/', false, 'private'],
  ['https://192.168.1.1/', false, 'private'],
  ['https://169.254.169.254/latest/meta-data/', false, 'link-local'],
  ['https://100.64.0.1/', false, 'CGNAT'],
  ['https://100.100.100.200/', false, 'CGNAT'],
  ['https://0.0.0.0/', false, 'unspecified'],
  ['https://224.0.0.1/', false, 'multicast'],
  ['https://239.255.255.250/', false, 'multicast'],
  ['https://240.0.0.1/', false, 'reserved'],
  ['https://255.255.255.255/', false, 'reserved'],
  ['https://192.0.2.10/', false, 'documentation'],
  ['https://198.51.100.7/', false, 'documentation'],
  ['https://203.0.113.9/', false, 'documentation'],
  ['https://198.18.0.1/', false, 'benchmarking'],
  ['https://192.0.0.8/', false, 'IETF'],
  // other spellings of 127.0.0.1
  ['https://2130706433/', false, 'loopback'],
  ['https://0x7f.1/', false, 'loopback'],
  ['https://0177.0.0.1/', false, 'loopback'],
  ['https://127.1/', false, 'loopback'],
  ['https://0x7f000001/', false, 'loopback'],
  // IPv6 ranges and forms
  ['https://[::1]/', false, 'global unicast'],
  ['https://[::]/', false, 'global unicast'],
  ['https://[fe80::1]/', false, 'global unicast'],
  ['https://[fc00::1]/', false, 'global unicast'],
  ['https://[fd00:ec2::254]/', false, 'global unicast'],
  ['https://[ff02::1]/', false, 'global unicast'],
  ['https://[fec0::1]/', false, 'global unicast'],
  ['https://[2001:db8::1]/', false, 'documentation'],
  ['https://[2001::1]/', false, 'IETF'],
  ['https://[100::1]/', false, 'global unicast'], // discard-only, outside 2000::/3
  ['https://[::ffff:127.0.0.1]/', false, 'loopback'],
  ['https://[::ffff:7f00:1]/', false, 'loopback'],
  ['https://[::ffff:169.254.169.254]/', false, 'link-local'],
  ['https://[64:ff9b::a00:1]/', false, 'private'], // NAT64 of 10.0.0.1
  ['https://[64:ff9b::127.0.0.1]/', false, 'loopback'],
  ['https://[2002:7f00:1::]/', false, 'loopback'], // 6to4 of 127.0.0.1
  ['https://[2002:c0a8:101::1]/', false, 'private'], // 6to4 of 192.168.1.1
  ['https://[::127.0.0.1]/', false, 'global unicast'], // IPv4-compatible (deprecated)
  // names
  ['https://localhost/', false, 'loopback'],
  ['https://LOCALHOST./', false, 'loopback'],
  ['https://api.localhost/', false, 'loopback'],
  ['https://intranet/', false, 'single-label'],
  ['https://metadata/computeMetadata/v1/', false, 'single-label'],
  ['https://printer.local/', false, 'internal'],
  ['https://metadata.google.internal/', false, 'internal'],
  ['https://router.home.arpa/', false, 'internal'],
  ['https://sneaky.example.com/', false, 'loopback'],
  ['https://half.example.com/', false, 'private'],
  ['https://metadata.example.com/', false, 'link-local'],
  ['https://v6private.example.com/', false, 'global unicast'],
  ['https://mapped.example.com/', false, 'private'],
  ['https://nowhere.example.com/', false, 'does not resolve'],
];

describe('webhook address policy', () => {
  test(`${CASES.length} cases`, async () => {
    assert.ok(CASES.length >= 40);
    for (const [url, allowed, word] of CASES) {
      const verdict = await check(url);
      assert.equal(verdict.allowed, allowed, `${url}: ${JSON.stringify(verdict)}`);
      if (!verdict.allowed && word) assert.match(verdict.reason, new RegExp(word, 'i'), url);
    }
  });

  test('allow-private accepts http and private targets, but not other schemes or credentials', async () => {
    for (const url of [
      'http://127.0.0.1:9000/hook',
      'http://localhost/',
      'https://10.0.0.1/',
      'http://[::1]:8080/',
    ]) {
      assert.equal((await check(url, true)).allowed, true, url);
    }
    for (const url of ['ftp://127.0.0.1/', 'http://u:p@127.0.0.1/']) {
      assert.equal((await check(url, true)).allowed, false, url);
    }
  });

  test('checkAddress on dialled IPs (what the delivery worker uses)', () => {
    assert.equal(checkAddress('93.184.216.34').allowed, true);
    assert.equal(checkAddress('127.0.0.1').allowed, false);
    assert.equal(checkAddress('::ffff:10.0.0.1').allowed, false);
    assert.equal(checkAddress('not-an-ip').allowed, false);
  });
});
