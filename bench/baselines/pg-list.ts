// The baseline of the list route: node:http answering with raw pg SELECTs of the same rows and figures
// (each endpoint's waiting deliveries, and its attempts of the last 24 hours), as prepared statements
// the way the service sends them; no auth, no framework, at the same concurrency.
import { createServer } from 'node:http';
import pg from 'pg';

const [url = '', projectId = ''] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, max: 20 });
const DAY_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;

const server = createServer(async (_request, response) => {
  const now = Date.now();
  const [list, day] = await Promise.all([
    pool.query({
      name: 'list',
      text: `select id, url, event_types, active, paused, rate_limit_per_second, ordering,
                    (select count(*)::int from deliveries d
                      where d.project_id = w.project_id and d.endpoint_id = w.id and d.state = 'pending') as waiting,
                    previous_secret is not null as has_previous_secret, created_at
               from webhook_endpoints w where project_id = $1 order by created_at, id`,
      values: [projectId],
    }),
    pool.query({
      name: 'day',
      text: `select d.endpoint_id, count(*)::int as attempts, count(*) filter (where a.succeeded)::int as succeeded
               from deliveries d
               join delivery_attempts a
                 on a.project_id = d.project_id and a.delivery_id = d.id and a.event_created_at = d.event_created_at
              where d.project_id = $1 and d.event_created_at >= $2 and d.event_created_at < $3
                and a.event_created_at >= $2 and a.event_created_at < $3 and a.started_at >= $2
              group by d.endpoint_id`,
      values: [projectId, new Date(now - DAY_MS), new Date(now + HOUR_MS)],
    }),
  ]);
  const last24h = new Map(
    day.rows.map((r) => [r.endpoint_id, { attempts: r.attempts, succeeded: r.succeeded }]),
  );
  const body = JSON.stringify({
    data: list.rows.map((r) => ({
      id: r.id,
      url: r.url,
      eventTypes: r.event_types,
      active: r.active,
      paused: r.paused,
      rateLimitPerSecond: r.rate_limit_per_second,
      ordering: r.ordering,
      waiting: r.waiting,
      hasPreviousSecret: r.has_previous_secret,
      createdAt: r.created_at.toISOString(),
      last24h: last24h.get(r.id) ?? { attempts: 0, succeeded: 0 },
    })),
  });
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
});
