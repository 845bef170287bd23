// The baselines of the publish path: `total` events written from a raw pg loop, `connections` at a time,
// with no HTTP and no service work, each to the one endpoint given. `rows`: the plain rows a publish
// leaves (publish-rows.ts). `statement`: the service's own statement for them (the sole write: the key's
// claim, the endpoints found by type, the checks), the ceiling the service can approach. Prints the rate,
// the p50 and p99 of a write, the failed ones, and this loop's own CPU per event.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { eventStore } from '../../src/events/store.ts';
import { soleStatement } from '../../src/idempotency/sole.ts';
import { newId } from '../../src/lib/ids.ts';
import { rowsStatement, SEALED_BODY } from './publish-rows.ts';
import { cpuPerOperation, summary } from './summary.ts';

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
/** One event and its delivery, written as `mode` says. */
function write(client: pg.PoolClient, key: string): pg.QueryConfig {
  if (config.mode === 'rows') return rowsStatement(config, config.type, data, key).query;
  const now = new Date();
  const { projectId, type } = config;
  const event = { projectId, id: newId(now), type, data, subjectHmacs: [] };
  const fingerprint = randomBytes(32);
  return soleStatement(
    eventStore(client).insertSole(event, 1, null),
    [],
    { projectId, key, fingerprint, now },
    { fingerprint, status: 202, sealedBody: randomBytes(SEALED_BODY) },
  );
}

const pool = new pg.Pool({ connectionString: config.url, max: config.connections });
const prefix = randomUUID();
const latencies: number[] = [];
let next = 0;
let errors = 0;
const started = performance.now();
const cpu = process.cpuUsage();
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
console.log(
  JSON.stringify({ ...summary(latencies, errors, seconds), cpuUs: cpuPerOperation(cpu, config.total) }),
);
