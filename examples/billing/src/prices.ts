// The price list: a unit price per `<capability>/<metric>` in minor units of one currency, flat or in
// graduated tiers (each tier's units at its own price, as Stripe's graduated pricing and Lago's
// graduated charges do). A metric the list does not name is not billed.
import { readFileSync } from 'node:fs';

type Price = { unitMinor: number } | { tiers: { upTo: number | null; unitMinor: number }[] };
export interface PriceList {
  currency: string;
  prices: Record<string, Price>;
}

export const readPrices = (file: string | URL): PriceList => JSON.parse(readFileSync(file, 'utf8'));

/** What `quantity` of a metric costs, in minor units (rounded once, at the line). */
export function priced(price: Price, quantity: number): number {
  if ('unitMinor' in price) return Math.round(price.unitMinor * quantity);
  let amount = 0;
  let from = 0;
  for (const tier of price.tiers) {
    const to = tier.upTo ?? Number.POSITIVE_INFINITY;
    amount += Math.max(0, Math.min(quantity, to) - from) * tier.unitMinor;
    from = to;
    if (quantity <= to) break;
  }
  return Math.round(amount);
}

export interface Line {
  metric: string;
  quantity: number;
  amountMinor: number;
}

/** The lines of an invoice for these quantities by `<capability>/<metric>`, and their total. */
export function linesOf(list: PriceList, quantities: Map<string, number>) {
  const lines: Line[] = [];
  for (const [metric, quantity] of [...quantities].sort(([a], [b]) => a.localeCompare(b))) {
    const price = list.prices[metric];
    if (price && quantity > 0) lines.push({ metric, quantity, amountMinor: priced(price, quantity) });
  }
  return { lines, totalMinor: lines.reduce((sum, line) => sum + line.amountMinor, 0) };
}
