// What Billing does, for its service and its close command alike: read the usage change feed into its
// ledger (adjusting a closed period that a late record changed), and close a period for every project.
// Each invoice and adjustment is published for its project, so the project's own endpoints receive it.
import { randomUUID } from 'node:crypto';
import type { Capability } from '@platform-core/capability';
import type { Invoice, Ledger } from './ledger.ts';
import { linesOf, type PriceList } from './prices.ts';

/** Reads the feed to its end; each page applied with its cursor in one transaction. How many changes. */
export async function syncFeed(platform: Capability, ledger: Ledger, prices: PriceList): Promise<number> {
  let read = 0;
  for (;;) {
    const page = await platform.usageChanges({ cursor: ledger.cursor(), limit: 1000 });
    if (page.data.length === 0) return read;
    ledger.apply(page.data, page.nextCursor);
    read += page.data.length;
    const touched = new Set(page.data.map((c) => `${c.projectId}|${c.day}`));
    for (const key of touched) {
      const [projectId = '', day = ''] = key.split('|');
      const invoice = ledger.covering(projectId, day);
      if (invoice) await adjust(platform, ledger, prices, invoice);
    }
  }
}

/** A closed period whose usage changed since: an adjustment for the difference, told to the project. */
async function adjust(platform: Capability, ledger: Ledger, prices: PriceList, invoice: Invoice) {
  const { lines, totalMinor } = linesOf(
    prices,
    ledger.quantities(invoice.projectId, invoice.from, invoice.to),
  );
  const id = randomUUID();
  const previous = ledger.adjust(id, invoice.id, totalMinor, lines);
  if (previous === undefined) return; // it bills that already
  await platform.publish({
    projectId: invoice.projectId,
    type: 'billing.invoice.adjusted',
    data: {
      invoiceId: invoice.id,
      adjustmentId: id,
      previousMinor: previous,
      totalMinor,
      deltaMinor: totalMinor - previous,
      lines,
    },
    idempotencyKey: `adjustment-${id}`,
  });
}

/** Closes `from`–`to` (UTC days, inclusive) for every project with billable usage: their invoices. */
export async function closePeriod(
  platform: Capability,
  ledger: Ledger,
  prices: PriceList,
  from: string,
  to: string,
) {
  await syncFeed(platform, ledger, prices);
  const invoices: Invoice[] = [];
  let cursor: string | undefined;
  do {
    const page = await platform.projects({ cursor, limit: 100 });
    for (const project of page.data) {
      const { lines, totalMinor } = linesOf(prices, ledger.quantities(project.id, from, to));
      if (lines.length === 0) continue;
      const invoice = ledger.invoice({
        id: randomUUID(),
        projectId: project.id,
        from,
        to,
        currency: prices.currency,
        totalMinor,
        lines,
        recipient: ledger.contactOf(project.id),
      });
      await platform.publish({
        projectId: project.id,
        type: 'billing.invoice.created',
        data: {
          invoiceId: invoice.id,
          from,
          to,
          currency: invoice.currency,
          totalMinor: invoice.totalMinor,
          lines: invoice.lines,
        },
        idempotencyKey: `invoice-${invoice.id}`,
      });
      invoices.push(invoice);
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return invoices;
}
