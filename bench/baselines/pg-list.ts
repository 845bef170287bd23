// The baseline of the list route: node:http answering with a raw pg SELECT of the same rows (no auth,
// no framework), at the same concurrency.
import { createServer } from 'node:http';
import pg from 'pg';

const [url = '', projectId = ''] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, max: 20 });
const server = createServer(async (_request, response) => {
  const { rows } = await pool.query(
    `select id, url, event_types, active, previous_secret is not null as has_previous_secret, created_at
       from webhook_endpoints where project_id = $1 order by created_at, id`,
    [projectId],
  );
  const body = JSON.stringify({
    data: rows.map((r) => ({
      id: r.id,
      url: r.url,
      eventTypes: r.event_types,
      active: r.active,
      hasPreviousSecret: r.has_previous_secret,
      createdAt: r.created_at.toISOString(),
    })),
  });
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
});
