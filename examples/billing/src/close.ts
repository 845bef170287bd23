// Closes a billing period: `npm run close-period -w examples/billing -- 2026-12` (a month) or
// `-- 2026-12-01 2026-12-15` (days, inclusive). Reads the feed to its end first, then invoices every
// project with billable usage in the period; an invoice already made for it is answered again.
import { closePeriod } from './billing.ts';
import { ledger, platform, prices, unreachable } from './settings.ts';

const [first = '', second] = process.argv.slice(2);
const month = /^\d{4}-\d{2}$/.test(first);
if (!month && !(/^\d{4}-\d{2}-\d{2}$/.test(first) && second && /^\d{4}-\d{2}-\d{2}$/.test(second))) {
  console.error('usage: close-period YYYY-MM | close-period YYYY-MM-DD YYYY-MM-DD');
  process.exit(2);
}
const from = month ? `${first}-01` : first;
const to = month
  ? new Date(Date.UTC(Number(first.slice(0, 4)), Number(first.slice(5, 7)), 0)).toISOString().slice(0, 10)
  : (second as string);
const invoices = await closePeriod(platform, ledger, prices, from, to).catch(unreachable);
for (const invoice of invoices)
  console.log(
    JSON.stringify({
      invoiceId: invoice.id,
      projectId: invoice.projectId,
      from,
      to,
      totalMinor: invoice.totalMinor,
      currency: invoice.currency,
    }),
  );
console.error(`closed ${from} to ${to}: ${invoices.length} invoices`);
ledger.close();
