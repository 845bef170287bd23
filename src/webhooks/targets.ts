// Where a destination sends (contract 0.4, Destinations beyond HTTPS): a webhook's URL, or a broker's URL
// with what names the place in it (an exchange and routing key, a stream, a subject), or nothing for
// polling. A password in a broker's URL is write-only: kept sealed, bound to its destination, and shown as
// `***`; the rest is kept in clear. The broker's host passes the address policy when the destination is
// made or changed, and again before every connection (delivery/brokers/connections.ts).
import { type ClearTarget, DESTINATION_TYPES, type DestinationType } from '../delivery-store/run.ts';
import { type Keyring, seal, unseal } from '../lib/crypto.ts';
import { PlatformError } from '../lib/errors.ts';
import { checkHost, MAX_URL_LENGTH, type UrlCheckOptions } from './address-policy.ts';

export { type ClearTarget, DESTINATION_TYPES, type DestinationType };

/** A target as given: what is kept, its URL with the password still in it. */
export type TargetInput = Omit<ClearTarget, 'hasPassword'>;

/** The schemes each broker takes; the second of each is over TLS. */
const SCHEMES: Record<Exclude<DestinationType, 'webhook' | 'polling'>, string[]> = {
  rabbitmq: ['amqp:', 'amqps:'],
  redis: ['redis:', 'rediss:'],
  nats: ['nats:', 'natss:'],
};

/** What each broker's target must name besides its URL. */
const NAMES: Record<Exclude<DestinationType, 'webhook' | 'polling'>, (keyof TargetInput)[]> = {
  rabbitmq: ['exchange', 'routingKey'],
  redis: ['stream'],
  nats: ['subject'],
};

const refuse = (reason: string, pointer = '/target/url') =>
  new PlatformError('WEBHOOK_URL_NOT_ALLOWED', reason, { errors: [{ pointer, detail: reason }] });

/**
 * A broker target checked: its scheme, its host under the address policy (before any connection), what it
 * must name; answered as kept in clear, and its password apart (null for none). Webhook and polling
 * targets are not brokers' (the service checks a webhook's URL as an endpoint's).
 */
export async function checkBrokerTarget(
  type: 'rabbitmq' | 'redis' | 'nats',
  input: TargetInput,
  options: UrlCheckOptions,
): Promise<{ clear: ClearTarget; password: string | null }> {
  const raw = input.url ?? '';
  if (raw.length > MAX_URL_LENGTH) throw refuse(`the URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('the URL is not a valid absolute URL');
  }
  const schemes = SCHEMES[type];
  if (!schemes.includes(url.protocol)) throw refuse(`a ${type} URL starts with ${schemes.join('// or ')}//`);
  if (url.hash || url.search) throw refuse('the URL must not have a query or a fragment');
  if (!url.hostname) throw refuse('the URL names no host');
  const verdict = await checkHost(url.hostname, options);
  if (!verdict.allowed) throw refuse(verdict.reason);
  for (const name of NAMES[type]) {
    if (input[name] !== undefined) continue;
    const detail = `a ${type} target names its ${name}`;
    throw new PlatformError('VALIDATION_FAILED', detail, {
      errors: [{ pointer: `/target/${name}`, detail }],
    });
  }
  const password = url.password ? decodeURIComponent(url.password) : null;
  url.password = '';
  const clear: ClearTarget = { url: url.toString(), hasPassword: password !== null };
  for (const name of ['exchange', 'routingKey', 'stream', 'maxLen', 'subject'] as const) {
    if (input[name] !== undefined) Object.assign(clear, { [name]: input[name] });
  }
  return { clear, password };
}

/** A target as answered: the URL with its password as `***`; nothing else hidden. */
export function shownTarget(type: DestinationType, url: string, clear: ClearTarget | null) {
  if (type === 'webhook') return { url };
  if (type === 'polling' || !clear) return {};
  const { hasPassword, ...shown } = clear;
  if (hasPassword && shown.url) {
    const masked = new URL(shown.url);
    masked.password = '***';
    shown.url = masked.toString().replace('%2A%2A%2A', '***');
  }
  return shown;
}

const context = (destinationId: string) => `destination-target:${destinationId}`;

export const sealPassword = (keyring: Keyring, destinationId: string, password: string) =>
  seal(keyring, Buffer.from(password), context(destinationId));

/** The broker's URL as a connection needs it: with its password, opened. */
export function openTargetUrl(keyring: Keyring, destinationId: string, url: string, sealed: Buffer | null) {
  if (!sealed) return url;
  const withPassword = new URL(url);
  withPassword.password = encodeURIComponent(
    unseal(keyring, sealed, context(destinationId)).toString('utf8'),
  );
  return withPassword.toString();
}
