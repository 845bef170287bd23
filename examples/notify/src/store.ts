// Notify's own tables: what it sent, tagged by recipient, so that a person's messages can be erased.
import pg from 'pg';

export interface Message {
  id: string;
  projectId: string;
  to: string;
  subject: string;
  sentAt: string;
}

export function messageStore(url: string) {
  const pool = new pg.Pool({ connectionString: url, max: 5 });
  return {
    async migrate() {
      await pool.query(`create table if not exists notify_messages (
        id uuid primary key, project_id uuid not null, recipient text not null, subject text not null,
        sent_at timestamptz not null default now())`);
      await pool.query(
        'create index if not exists notify_messages_recipient on notify_messages (project_id, recipient)',
      );
    },
    async insert(message: Omit<Message, 'sentAt'>) {
      await pool.query(
        'insert into notify_messages (id, project_id, recipient, subject) values ($1, $2, $3, $4)',
        [message.id, message.projectId, message.to, message.subject],
      );
    },
    async find(projectId: string, id: string): Promise<Message | undefined> {
      const { rows } = await pool.query(
        `select id, project_id as "projectId", recipient as "to", subject, sent_at as "sentAt"
           from notify_messages where project_id = $1 and id = $2`,
        [projectId, id],
      );
      return rows[0];
    },
    /** Erases a person's messages (by e-mail address): how many. */
    async erase(projectId: string, email: string): Promise<number> {
      const result = await pool.query(
        'delete from notify_messages where project_id = $1 and recipient = $2',
        [projectId, email.toLowerCase()],
      );
      return result.rowCount ?? 0;
    },
    close: () => pool.end(),
  };
}
