// The baselines of the publish path: `total` events written from a raw pg loop, `connections` at a time,
// with no HTTP and no service work, each to the one endpoint given. `rows`: the rows a publish leaves
// (the event, its delivery's history row and queue row, and the idempotency record of its answer) in one
// plain statement, as a hand-written outbox would write them. `statement`: the service's own statement
// for them (the sole write: the key's claim, the endpoints found by type, the checks), the ceiling the
// service can approach. Prints the rate, the p50 and p99 of a write, and the failed ones.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { eventStore } from '../../src/events/store.ts';
import { soleStatement } from '../../src/idempotency/sole.ts';
import { newId } from '../../src/partitions/ids.ts';
import { summary } from './summary.ts';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  url: string;
  mode: 'rows' | 'statement';
  projectId: string;
  endpointId: string;
  type: string;
  total: number;
  connections: number;
  data: unknown;
};
const data = JSON.stringify(config.data);
// As long as a publish's sealed answer: {"eventId":…,"deliveries":1} (65 bytes) and 33 of seal (crypto.ts).
const SEALED_BODY = 98;
const ROWS = `with event as (
    insert into events (project_id, id, type, data, created_at) values ($1, $2, $3, $4, $5)
  ), delivery as (
    insert into deliveries (project_id, id, event_id, event_created_at, endpoint_id, kind, created_at)
    values ($1, $6, $2, $5, $7, 'dispatch', now())
  ), queued as (
    insert into delivery_queue (delivery_id, project_id, event_id, event_created_at, endpoint_id)
    values ($6, $1, $2, $5, $7)
  )
  insert into idempotency_keys (project_id, key, fingerprint, status, sealed_body, created_at)
  values ($1, $8, $9, 202, $10, now())`;

/** One event and its delivery, written as `mode` says. */
function write(client: pg.PoolClient, key: string): pg.QueryConfig {
  const now = new Date();
  const id = newId(now);
  const fingerprint = randomBytes(32);
  const sealedBody = randomBytes(SEALED_BODY);
  const { projectId, type } = config;
  if (config.mode === 'rows') {
    return {
      name: 'publish-rows',
      text: ROWS,
      values: [projectId, id, type, data, now, newId(now), config.endpointId, key, fingerprint, sealedBody],
    };
  }
  const event = { projectId, id, type, data, subjectHmacs: [] };
  return soleStatement(
    eventStore(client).insertSole(event, 1, null),
    [],
    { projectId, key, fingerprint, now },
    { fingerprint, status: 202, sealedBody },
  );
}

const pool = new pg.Pool({ connectionString: config.url, max: config.connections });
const prefix = randomUUID();
const latencies: number[] = [];
let next = 0;
let errors = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: config.connections }, async () => {
    const client = await pool.connect();
    for (let n = next++; n < config.total; n = next++) {
      const sent = performance.now();
      try {
        await client.query(write(client, `${prefix}-${n}`));
        latencies.push(performance.now() - sent);
      } catch (error) {
        if (errors++ === 0) console.error(error); // the first, to tell why; the count fails the run
      }
    }
    client.release();
  }),
);
const seconds = (performance.now() - started) / 1000;
await pool.end();
console.log(JSON.stringify(summary(latencies, errors, seconds)));
