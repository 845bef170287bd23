// What Billing does, for its service and its close command alike: read the usage change feed into its
// ledger (adjusting a closed period that a late record changed), and close a period for every project.
// Each invoice and adjustment is recorded first, then published for its project (so the project's own
// endpoints receive it) until the platform accepts it: the ledger is Billing's outbox.
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
      if (invoice) adjust(ledger, prices, invoice);
    }
    await publishOwed(platform, ledger);
  }
}

/** A closed period whose usage changed since: an adjustment for the difference (unless it bills that). */
function adjust(ledger: Ledger, prices: PriceList, invoice: Invoice) {
  const { lines, totalMinor } = linesOf(
    prices,
    ledger.quantities(invoice.projectId, invoice.from, invoice.to),
  );
  ledger.adjust(randomUUID(), invoice.id, totalMinor, lines);
}

/**
 * Publishes every invoice and adjustment the ledger holds unpublished, each with an idempotency key of its
 * own id: a publish retried after an unknown outcome, or by the service and a close command at once, is
 * one event.
 */
export async function publishOwed(platform: Capability, ledger: Ledger) {
  const { invoices, adjustments } = ledger.unpublished();
  const owed = [
    ...invoices.map((invoice) => ({
      kind: 'invoice' as const,
      id: invoice.id,
      projectId: invoice.projectId,
      type: 'billing.invoice.created',
      data: {
        invoiceId: invoice.id,
        from: invoice.from,
        to: invoice.to,
        currency: invoice.currency,
        totalMinor: invoice.totalMinor,
        lines: invoice.lines,
      },
    })),
    ...adjustments.map((a) => ({
      kind: 'adjustment' as const,
      id: a.id,
      projectId: a.projectId,
      type: 'billing.invoice.adjusted',
      data: {
        invoiceId: a.invoiceId,
        adjustmentId: a.id,
        previousMinor: a.previousMinor,
        totalMinor: a.totalMinor,
        deltaMinor: a.totalMinor - a.previousMinor,
        lines: a.lines,
      },
    })),
  ];
  for (const { kind, id, projectId, type, data } of owed) {
    await platform.publish({ projectId, type, data, idempotencyKey: `${kind}-${id}` });
    ledger.published(kind, id);
  }
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
      invoices.push(
        ledger.invoice({
          id: randomUUID(),
          projectId: project.id,
          from,
          to,
          currency: prices.currency,
          totalMinor,
          lines,
          recipient: ledger.contactOf(project.id),
        }),
      );
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  await publishOwed(platform, ledger);
  return invoices;
}
