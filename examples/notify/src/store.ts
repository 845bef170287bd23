// Notify's own store: what it sent, tagged by recipient, so that a person's messages can be erased. An
// embedded SQLite file (node:sqlite, built into Node.js): nothing to install or create beforehand.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';

export interface Message {
  id: string;
  projectId: string;
  to: string;
  subject: string;
  sentAt: string;
}

export function messageStore(file: string) {
  mkdirSync(path.dirname(file), { recursive: true });
  const db = new DatabaseSync(file);
  db.exec(`create table if not exists notify_messages (
    id text primary key, project_id text not null, recipient text not null, subject text not null,
    sent_at text not null default (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
  create index if not exists notify_messages_recipient on notify_messages (project_id, recipient);`);
  const insert = db.prepare(
    'insert into notify_messages (id, project_id, recipient, subject) values (?, ?, ?, ?)',
  );
  const find = db.prepare(
    `select id, project_id as projectId, recipient as "to", subject, sent_at as sentAt
       from notify_messages where project_id = ? and id = ?`,
  );
  const erase = db.prepare('delete from notify_messages where project_id = ? and recipient = ?');
  return {
    insert(message: Omit<Message, 'sentAt'>) {
      insert.run(message.id, message.projectId, message.to, message.subject);
    },
    find(projectId: string, id: string): Message | undefined {
      return find.get(projectId, id) as Message | undefined;
    },
    /** Erases a person's messages (by e-mail address): how many. */
    erase(projectId: string, email: string): number {
      return Number(erase.run(projectId, email.toLowerCase()).changes);
    },
    close: () => db.close(),
  };
}
