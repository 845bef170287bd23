// Billing's settings: where the platform is, its own key (from the environment, or from what `platform
// capabilities create billing --json` printed, saved as capability.json beside its README), its ledger
// and its price list.
import { readFileSync } from 'node:fs';
import { Capability, PlatformError } from '@platform-core/capability';
import { openLedger } from './ledger.ts';
import { readPrices } from './prices.ts';

const env = process.env;
export const PLATFORM_URL = env.PLATFORM_URL ?? 'http://127.0.0.1:8080';
const { key, signingSecret } = env.BILLING_CAPABILITY_KEY
  ? { key: env.BILLING_CAPABILITY_KEY, signingSecret: env.BILLING_SIGNING_SECRETS ?? '' }
  : JSON.parse(readFileSync(new URL('../capability.json', import.meta.url), 'utf8'));
export const SECRETS = String(signingSecret).split(',');
export const platform = new Capability({ apiKey: key, baseUrl: PLATFORM_URL });
export const ledger = openLedger(
  env.BILLING_DATA ?? new URL('../.data/billing.db', import.meta.url).pathname,
);
export const prices = readPrices(env.BILLING_PRICES ?? new URL('../prices.json', import.meta.url));

/** Exits with a sentence naming PLATFORM_URL when the platform does not answer; rethrows anything else. */
export function unreachable(error: unknown): never {
  if (!(error instanceof PlatformError) || error.status !== 0) throw error;
  console.error(`billing: no answer from the platform at PLATFORM_URL=${PLATFORM_URL}: is it running there?`);
  process.exit(1);
}
