// A local stand-in for an e-mail provider, started by Notify itself when no NOTIFY_PROVIDER_URL is given:
// the provider's HTTP API (`POST /send`) catches each message instead of sending it, prints it, and lists
// what it caught at `GET /messages`, as Mailpit or MailHog would. With a real provider, set
// NOTIFY_PROVIDER_URL and this does not start.
import { createServer } from 'node:http';

export async function startMailbox(port: number, host: string): Promise<{ url: string; close(): void }> {
  const caught: unknown[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk;
    });
    request.on('end', () => {
      if (request.method === 'GET' && request.url === '/messages')
        return response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(caught));
      if (request.method !== 'POST' || request.url !== '/send') return response.writeHead(404).end();
      const message = JSON.parse(body) as { to: string; subject: string };
      caught.push({ ...message, caughtAt: new Date().toISOString() });
      console.log(`mailbox: caught a message to ${message.to}: ${JSON.stringify(message.subject)}`);
      response.writeHead(202, { 'content-type': 'application/json' }).end('{"queued":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return { url: `http://${host}:${port}`, close: () => server.close() };
}
