// Billing's own store (node:sqlite): the usage totals as the change feed last gave them, where the feed
// was read to, the invoices of closed periods and their adjustments, and each project's billing contact.
// Invoices are kept, as the law requires; an erasure anonymizes the person named on them.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Line } from './prices.ts';

export interface Invoice {
  id: string;
  projectId: string;
  from: string;
  to: string;
  currency: string;
  totalMinor: number;
  lines: Line[];
  recipient: string | null;
}

export interface Adjustment {
  id: string;
  invoiceId: string;
  projectId: string;
  previousMinor: number;
  totalMinor: number;
  lines: Line[];
}

export function openLedger(file: string) {
  mkdirSync(path.dirname(file), { recursive: true });
  const db = new DatabaseSync(file);
  db.exec(`pragma journal_mode = wal; pragma busy_timeout = 5000;
    create table if not exists feed (only_row integer primary key check (only_row = 1), cursor text);
    create table if not exists totals (project_id text, day text, metric text, count integer not null,
      primary key (project_id, day, metric));
    create table if not exists invoices (id text primary key, project_id text not null, period_from text not null,
      period_to text not null, currency text not null, total_minor integer not null, lines text not null,
      recipient text, created_at text not null default (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
      published_at text, unique (project_id, period_from, period_to));
    create table if not exists adjustments (id text primary key, invoice_id text not null references invoices (id),
      previous_minor integer not null, total_minor integer not null, lines text not null,
      created_at text not null default (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')), published_at text);
    create table if not exists contacts (project_id text primary key, email text not null);`);
  const invoiceColumns = `id, project_id as projectId, period_from as "from", period_to as "to", currency,
    total_minor as totalMinor, lines, recipient`;
  const toInvoice = (row: Record<string, unknown> | undefined) =>
    row && ({ ...row, lines: JSON.parse(row.lines as string) } as unknown as Invoice);
  const statements = {
    cursor: db.prepare('select cursor from feed'),
    setCursor: db.prepare(
      'insert into feed (only_row, cursor) values (1, ?) on conflict (only_row) do update set cursor = excluded.cursor',
    ),
    total: db.prepare(`insert into totals (project_id, day, metric, count) values (?, ?, ?, ?)
      on conflict (project_id, day, metric) do update set count = excluded.count`),
    quantities: db.prepare(
      'select metric, sum(count) as quantity from totals where project_id = ? and day between ? and ? group by metric',
    ),
    projectsIn: db.prepare('select distinct project_id as projectId from totals where day between ? and ?'),
    invoice: db.prepare(
      'insert into invoices (id, project_id, period_from, period_to, currency, total_minor, lines, recipient) values (?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing',
    ),
    invoiceOf: db.prepare(
      `select ${invoiceColumns} from invoices where project_id = ? and period_from = ? and period_to = ?`,
    ),
    covering: db.prepare(
      `select ${invoiceColumns} from invoices where project_id = ? and ? between period_from and period_to`,
    ),
    invoicesOf: db.prepare(
      `select ${invoiceColumns} from invoices where project_id = ? order by period_from`,
    ),
    billed:
      db.prepare(`select coalesce((select total_minor from adjustments where invoice_id = ? order by created_at desc, rowid desc limit 1),
      (select total_minor from invoices where id = ?)) as billed`),
    adjust: db.prepare(
      'insert into adjustments (id, invoice_id, previous_minor, total_minor, lines) values (?, ?, ?, ?, ?)',
    ),
    unpublishedInvoices: db.prepare(
      `select ${invoiceColumns} from invoices where published_at is null order by created_at, rowid`,
    ),
    unpublishedAdjustments: db.prepare(
      `select a.id, a.invoice_id as invoiceId, i.project_id as projectId, a.previous_minor as previousMinor,
              a.total_minor as totalMinor, a.lines
         from adjustments a join invoices i on i.id = a.invoice_id
        where a.published_at is null order by a.created_at, a.rowid`,
    ),
    invoicePublished: db.prepare(
      `update invoices set published_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') where id = ?`,
    ),
    adjustmentPublished: db.prepare(
      `update adjustments set published_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') where id = ?`,
    ),
    contact: db.prepare(
      'insert into contacts (project_id, email) values (?, ?) on conflict (project_id) do update set email = excluded.email',
    ),
    contactOf: db.prepare('select email from contacts where project_id = ?'),
    anonymize: db.prepare('update invoices set recipient = null where project_id = ? and recipient = ?'),
    forget: db.prepare('delete from contacts where project_id = ? and email = ?'),
  };
  return {
    cursor: () => (statements.cursor.get() as { cursor: string } | undefined)?.cursor,
    /** A page of the feed: each total as it stands now, and where the feed was read to, in one transaction. */
    apply(
      changes: { projectId: string; day: string; capability: string; metric: string; count: number }[],
      cursor: string,
    ) {
      db.exec('begin');
      try {
        for (const c of changes)
          statements.total.run(c.projectId, c.day, `${c.capability}/${c.metric}`, c.count);
        statements.setCursor.run(cursor);
        db.exec('commit');
      } catch (error) {
        db.exec('rollback');
        throw error;
      }
    },
    quantities(projectId: string, from: string, to: string) {
      const rows = statements.quantities.all(projectId, from, to) as { metric: string; quantity: number }[];
      return new Map(rows.map((r) => [r.metric, Number(r.quantity)]));
    },
    projectsIn: (from: string, to: string) =>
      (statements.projectsIn.all(from, to) as { projectId: string }[]).map((r) => r.projectId),
    /** A period's invoice, made once (a second close of the same period answers the first). */
    invoice(invoice: Invoice): Invoice {
      const { id, projectId, from, to, currency, totalMinor, lines, recipient } = invoice;
      statements.invoice.run(id, projectId, from, to, currency, totalMinor, JSON.stringify(lines), recipient);
      return toInvoice(statements.invoiceOf.get(projectId, from, to)) as Invoice;
    },
    /** The closed invoice whose period holds this day, if any. */
    covering: (projectId: string, day: string) => toInvoice(statements.covering.get(projectId, day)),
    invoicesOf: (projectId: string) =>
      (statements.invoicesOf.all(projectId) as Record<string, unknown>[]).map(toInvoice),
    /**
     * An adjustment to `total`, when the invoice does not bill that already: what it billed before, or
     * undefined. One transaction that takes the write lock first, so that the service and a close command
     * reading the same page of the feed adjust once.
     */
    adjust(id: string, invoiceId: string, total: number, lines: Line[]): number | undefined {
      db.exec('begin immediate');
      try {
        const previous = Number((statements.billed.get(invoiceId, invoiceId) as { billed: number }).billed);
        if (previous !== total) statements.adjust.run(id, invoiceId, previous, total, JSON.stringify(lines));
        db.exec('commit');
        return previous === total ? undefined : previous;
      } catch (error) {
        db.exec('rollback');
        throw error;
      }
    },
    /**
     * What the projects have not been told yet, oldest first: invoices, then adjustments. Each is recorded
     * before it is published and marked once the platform accepted it, so a publish that failed (or a crash
     * between the two) is published again with the same idempotency key, never lost and never twice.
     */
    unpublished() {
      return {
        invoices: (statements.unpublishedInvoices.all() as Record<string, unknown>[]).map(
          toInvoice,
        ) as Invoice[],
        adjustments: (statements.unpublishedAdjustments.all() as Record<string, unknown>[]).map((row) => ({
          ...(row as unknown as Omit<Adjustment, 'lines'>),
          lines: JSON.parse(row.lines as string) as Line[],
        })),
      };
    },
    published(kind: 'invoice' | 'adjustment', id: string) {
      (kind === 'invoice' ? statements.invoicePublished : statements.adjustmentPublished).run(id);
    },
    setContact: (projectId: string, email: string) => statements.contact.run(projectId, email.toLowerCase()),
    contactOf: (projectId: string) =>
      (statements.contactOf.get(projectId) as { email: string } | undefined)?.email ?? null,
    /** A person erased: their name goes from the project's invoices (kept) and contact; how many records. */
    erase(projectId: string, email: string): number {
      const lower = email.toLowerCase();
      return (
        Number(statements.anonymize.run(projectId, lower).changes) +
        Number(statements.forget.run(projectId, lower).changes)
      );
    },
    close: () => db.close(),
  };
}

export type Ledger = ReturnType<typeof openLedger>;
