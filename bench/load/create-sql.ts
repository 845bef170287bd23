// A reference for idempotent creates: the SQL of one create exactly as the service sends it (the claim,
// BEGIN and the endpoint insert in one round trip; the record and COMMIT in a second), from a raw pg loop
// with no HTTP and no service work. It is the ceiling the service's creates can approach on this machine.
// Projects are taken as the HTTP load takes its keys: windows of 64, each project making 20 creates.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import type { Db } from '../../src/db/database.ts';
import { executable } from '../../src/db/inline.ts';
import { claimQuery, recordQuery } from '../../src/idempotency/store.ts';
import { endpointStore } from '../../src/webhooks/store.ts';
import { summary } from './summary.ts';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  url: string;
  connections: number;
  duration: number;
  projects: string[];
};
const WINDOW = 64;
const USES = 20;
const pool = new pg.Pool({ connectionString: config.url, max: config.connections });
const prefix = randomUUID();
const latencies: number[] = [];
const deadline = performance.now() + config.duration * 1000;
let next = 0;
let errors = 0;

/** One create: the claim and BEGIN ride with the insert, as the service's first statement does. */
async function create(client: pg.PoolClient, projectId: string, key: string) {
  const now = new Date();
  const claim = await executable(client, claimQuery(projectId, key, now));
  let sent = false;
  const tx: Db = {
    query: (async (statement: pg.QueryConfig) => {
      if (sent) throw new Error('only the first statement carries the claim; the insert is one statement');
      sent = true;
      const results = await client.query(`${claim}; begin; ${await executable(client, statement)}`);
      return (results as unknown as pg.QueryResult[])[2];
    }) as Db['query'],
  };
  const row = await endpointStore(tx).insertWithinLimit(projectId, {
    id: randomUUID(),
    url: 'https://93.184.216.34/hook',
    eventTypes: ['pay.payment.succeeded'],
    sealedSecret: randomBytes(65), // as long as a sealed 32-byte secret
  });
  if (!row) throw new Error('the project is full');
  // As long as the sealed body of a create's answer (measured: 293 bytes).
  const outcome = { fingerprint: randomBytes(32), status: 201, sealedBody: randomBytes(293) };
  await client.query(`${await executable(client, recordQuery(projectId, key, outcome, now))}; commit`);
}

await Promise.all(
  Array.from({ length: config.connections }, async () => {
    const client = await pool.connect();
    while (performance.now() < deadline) {
      const n = next++;
      const index = Math.floor(n / (WINDOW * USES)) * WINDOW + (n % WINDOW);
      const projectId = config.projects[index % config.projects.length] as string;
      const started = performance.now();
      try {
        await create(client, projectId, `${prefix}-${n}`);
        latencies.push(performance.now() - started);
      } catch (error) {
        if (errors++ === 0) console.error(error); // the first, to tell why; the count fails the run
        await client.query('rollback').catch(() => {});
      }
    }
    client.release();
  }),
);
await pool.end();
console.log(JSON.stringify(summary(latencies, errors, config.duration)));
