// Pay's own store: the payments it made, in an embedded SQLite file (node:sqlite). A person's erasure
// anonymizes their payments (the e-mail and the name go) but keeps each payment's amount, currency, time
// and outcome, which the law requires a merchant to keep.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';

export interface Payment {
  id: string;
  projectId: string;
  amount: number;
  currency: string;
  status: 'succeeded' | 'failed' | 'settled';
  email: string | null;
  name: string | null;
  processorId: string | null;
  createdAt: string;
}

export function paymentStore(file: string) {
  mkdirSync(path.dirname(file), { recursive: true });
  const db = new DatabaseSync(file);
  db.exec(`create table if not exists payments (
    id text primary key, project_id text not null, amount integer not null, currency text not null,
    status text not null, email text, name text, processor_id text unique,
    created_at text not null default (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
  create index if not exists payments_email on payments (project_id, email);`);
  const columns = `id, project_id as projectId, amount, currency, status, email, name,
    processor_id as processorId, created_at as createdAt`;
  const insert = db.prepare(
    'insert into payments (id, project_id, amount, currency, status, email, name, processor_id) values (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const find = db.prepare(`select ${columns} from payments where project_id = ? and id = ?`);
  const byProcessor = db.prepare(`select ${columns} from payments where processor_id = ?`);
  const settle = db.prepare(
    `update payments set status = 'settled' where processor_id = ? and status = 'succeeded'`,
  );
  const anonymize = db.prepare(
    `update payments set email = null, name = null where project_id = ? and email = ? and email is not null`,
  );
  return {
    insert(p: Omit<Payment, 'createdAt'>) {
      insert.run(p.id, p.projectId, p.amount, p.currency, p.status, p.email, p.name, p.processorId);
    },
    find: (projectId: string, id: string) => find.get(projectId, id) as Payment | undefined,
    /** Marks a charge settled; the payment, when this changed it (a repeated webhook changes nothing). */
    settle(processorId: string): Payment | undefined {
      return Number(settle.run(processorId).changes) > 0
        ? (byProcessor.get(processorId) as Payment | undefined)
        : undefined;
    },
    /** Anonymizes a person's payments (by e-mail): how many. */
    anonymize: (projectId: string, email: string) =>
      Number(anonymize.run(projectId, email.toLowerCase()).changes),
    close: () => db.close(),
  };
}
