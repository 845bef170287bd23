// A baseline of `publish`: a bare HTTP server in front of the plain rows (load/publish-rows.ts). node:http,
// the JSON body parsed, one statement a request on a pool with a connection for each request in flight,
// 202 with the event's id.
// No key, no idempotency, no validation, no group commit: what HTTP alone adds to the rows on this
// machine, the floor any HTTP service of the publish path stands on. Prints the address it listens on;
// runs until it is stopped (SIGTERM).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import pg from 'pg';
import { rowsStatement } from '../load/publish-rows.ts';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  url: string;
  projectId: string;
  endpointId: string;
  connections: number;
};
const pool = new pg.Pool({ connectionString: config.url, max: config.connections });

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', async () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { type: string; data: unknown };
      const key = String(request.headers['idempotency-key']);
      const { id, query } = rowsStatement(config, body.type, JSON.stringify(body.data), key);
      await pool.query(query);
      response.writeHead(202, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ eventId: id, deliveries: 1 }));
    } catch (error) {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: String(error) }));
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  console.log(`bare publish server listening on http://127.0.0.1:${address.port}`);
});
// Stopped, it exits as a process does when it ends (so that a --cpu-prof profile is written).
process.on('SIGTERM', () => process.exit(0));
