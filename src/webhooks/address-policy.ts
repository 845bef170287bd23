// Where webhooks may go: public HTTPS addresses only (unless private targets are allowed for development).
// One policy, used twice: when an endpoint is created (its URL, and what its host name resolves to), and
// by the delivery worker at connection time on the IP actually dialled, so a DNS change after creation
// cannot turn a delivery inward.
import { promises as dns } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { PlatformError } from '../lib/errors.ts';

export const MAX_URL_LENGTH = 2048;

export type Verdict = { allowed: true } | { allowed: false; reason: string };
/** All addresses a host name resolves to (A and AAAA). */
export type Resolver = (hostname: string) => Promise<string[]>;

const refuse = (reason: string): Verdict => ({ allowed: false, reason });
const ALLOWED: Verdict = { allowed: true };

// IANA special-purpose registries (RFC 6890 and successors): nothing here is a public destination.
const FORBIDDEN_V4: [string, number, string][] = [
  ['0.0.0.0', 8, 'an unspecified ("this network") address'],
  ['10.0.0.0', 8, 'a private address'],
  ['100.64.0.0', 10, 'a shared (CGNAT) address'], // includes 100.100.100.200, a cloud metadata address
  ['127.0.0.0', 8, 'a loopback address'],
  ['169.254.0.0', 16, 'a link-local address'], // includes 169.254.169.254, the cloud metadata address
  ['172.16.0.0', 12, 'a private address'],
  ['192.0.0.0', 24, 'an IETF protocol address'],
  ['192.0.2.0', 24, 'a documentation address'],
  ['192.31.196.0', 24, 'an AS112 address'],
  ['192.52.193.0', 24, 'an AMT address'],
  ['192.88.99.0', 24, 'a 6to4 relay address'],
  ['192.168.0.0', 16, 'a private address'],
  ['192.175.48.0', 24, 'an AS112 address'],
  ['198.18.0.0', 15, 'a benchmarking address'],
  ['198.51.100.0', 24, 'a documentation address'],
  ['203.0.113.0', 24, 'a documentation address'],
  ['224.0.0.0', 4, 'a multicast address'],
  ['240.0.0.0', 4, 'a reserved address'], // includes 255.255.255.255, broadcast
];
const FORBIDDEN_V6: [string, number, string][] = [
  ['64:ff9b:1::', 48, 'a local-use NAT64 address'],
  ['100::', 64, 'a discard-only address'],
  ['2001::', 23, 'an IETF protocol address'], // includes Teredo (2001::/32)
  ['2001:db8::', 32, 'a documentation address'],
  ['3fff::', 20, 'a documentation address'],
  ['5f00::', 16, 'a segment-routing address'],
];
// Outside 2000::/3 (global unicast) nothing is public: loopback, unspecified, ULA (fc00::/7, where
// fd00:ec2::254, a cloud metadata address, lives), link-local, site-local, multicast.
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

const v4 = new Map<string, BlockList>();
for (const [network, prefix, reason] of FORBIDDEN_V4) {
  const list = v4.get(reason) ?? new BlockList();
  list.addSubnet(network, prefix, 'ipv4');
  v4.set(reason, list);
}
const v6 = FORBIDDEN_V6.map(([network, prefix, reason]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, 'ipv6');
  return { list, reason };
});

/** Whether a literal IP address is a public destination. */
export function checkAddress(address: string): Verdict {
  const family = isIP(address);
  if (family === 4) {
    for (const [reason, list] of v4)
      if (list.check(address, 'ipv4')) return refuse(`${address} is ${reason}`);
    return ALLOWED;
  }
  if (family !== 6) return refuse(`${address} is not an IP address`);
  const groups = ipv6Groups(address);
  // Forms that carry an IPv4 address are judged by that address.
  const embedded = embeddedIpv4(groups);
  if (embedded) {
    const inner = checkAddress(embedded);
    return inner.allowed
      ? ALLOWED
      : refuse(`${address} carries ${embedded}, which is ${inner.reason.replace(`${embedded} is `, '')}`);
  }
  if (!GLOBAL_UNICAST.check(address, 'ipv6')) return refuse(`${address} is not a global unicast address`);
  for (const { list, reason } of v6)
    if (list.check(address, 'ipv6')) return refuse(`${address} is ${reason}`);
  return ALLOWED;
}

/** The IPv4 address inside an IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address. */
function embeddedIpv4(g: number[]): string | undefined {
  const dotted = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return dotted(g[6] ?? 0, g[7] ?? 0);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return dotted(g[6] ?? 0, g[7] ?? 0);
  if (g[0] === 0x2002) return dotted(g[1] ?? 0, g[2] ?? 0);
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address (which isIP has already accepted). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text); // a dotted-quad tail: two more groups
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const parse = (part: string) => (part ? part.split(':').map((x) => Number.parseInt(x, 16)) : []);
  const left = parse(head);
  const right = rest === undefined ? [] : parse(rest);
  return [...left, ...Array(8 - left.length - right.length).fill(0), ...right];
}

/** Whether a host name (not an IP) could only be internal, whatever it resolves to. */
function internalName(host: string): string | undefined {
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a loopback name`;
  if (!host.includes('.')) return `${host} is a single-label name, not a public host`;
  if (/\.(local|internal|intranet|lan|home\.arpa|corp|private)$/.test(host))
    return `${host} is a local or internal name`;
  return undefined;
}

export interface UrlCheckOptions {
  allowPrivate: boolean;
  resolve: Resolver;
}

/** The whole creation-time check of a webhook URL. */
export async function checkWebhookUrl(raw: string, options: UrlCheckOptions): Promise<Verdict> {
  if (raw.length > MAX_URL_LENGTH) return refuse(`the URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('the URL is not a valid absolute URL');
  }
  const schemes = options.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) return refuse(`the scheme must be ${schemes.join(' or ')}`);
  if (url.username || url.password) return refuse('the URL must not carry a user name or password');
  if (url.hash) return refuse('the URL must not have a fragment');
  // WHATWG parsing has already turned 2130706433, 0x7f.1 and 0177.0.0.1 into 127.0.0.1, and IDNs into punycode.
  return checkHost(url.hostname, options);
}

/** A webhook URL under the address policy, or a 400 pointing at where it was given. */
export async function requireAllowedUrl(url: string, options: UrlCheckOptions, pointer = '/url') {
  const verdict = await checkWebhookUrl(url, options);
  if (!verdict.allowed) {
    throw new PlatformError('WEBHOOK_URL_NOT_ALLOWED', verdict.reason, {
      errors: [{ pointer, detail: verdict.reason }],
    });
  }
}

/**
 * Whether a host may be sent to: an IP literal by its address, a name by every address it resolves to
 * (and never a name only an internal network has). Anything, with PLATFORM_WEBHOOK_ALLOW_PRIVATE=1.
 */
export async function checkHost(hostname: string, options: UrlCheckOptions): Promise<Verdict> {
  if (options.allowPrivate) return ALLOWED;
  const host = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (isIP(host)) return checkAddress(host);
  const internal = internalName(host);
  if (internal) return refuse(internal);
  let addresses: string[];
  try {
    addresses = await options.resolve(host);
  } catch {
    return refuse(`${host} does not resolve`);
  }
  if (addresses.length === 0) return refuse(`${host} does not resolve`);
  for (const address of addresses) {
    const verdict = checkAddress(address);
    if (!verdict.allowed) return refuse(`${host} resolves to ${verdict.reason}`);
  }
  return ALLOWED;
}

const RESOLVE_TIMEOUT_MS = 3000;

/** The system resolver (getaddrinfo), bounded in time. */
export const systemResolver: Resolver = async (hostname) => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('resolution timed out')), RESOLVE_TIMEOUT_MS);
  });
  try {
    const found = await Promise.race([dns.lookup(hostname, { all: true, verbatim: true }), timeout]);
    return found.map((entry) => entry.address);
  } finally {
    clearTimeout(timer);
  }
};
